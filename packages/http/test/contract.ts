// Checks answers against the OpenAPI document the handler serves, with a JSON Schema 2020-12
// validator (ajv) reading the document's own schemas: status listed, body and headers in shape.
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"

interface Operation {
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly schema?: { readonly type?: string } }>
  readonly requestBody?: { readonly content: Record<string, unknown> }
  readonly responses: Record<
    string,
    {
      readonly headers?: Record<string, { readonly required?: boolean; readonly schema: unknown }>
      readonly content?: Record<string, unknown>
    }
  >
}

export interface Document {
  readonly servers?: ReadonlyArray<{ readonly url: string }>
  readonly paths: Record<string, Record<string, Operation>>
}

export interface Observed {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

const pointer = (...segments: ReadonlyArray<string>) =>
  segments.map((s) => s.replaceAll("~", "~0").replaceAll("/", "~1")).join("/")

export const makeContract = (document: Document) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  // The document itself is the schema: `#/components/...` references resolve inside it.
  const id = "https://mailroom.test/openapi.json"
  ajv.addSchema({ ...document, $id: id })
  const validatorAt = (...segments: ReadonlyArray<string>) => ajv.compile({ $ref: `${id}#/${pointer(...segments)}` })

  /** The problems with one answer; none when the document describes it exactly. */
  const problems = (observed: Observed): ReadonlyArray<string> => {
    const where = `${observed.method} ${observed.path} ${observed.status}`
    const operation = document.paths[observed.path]?.[observed.method.toLowerCase()]
    if (operation === undefined) return [`${where}: no such operation in the document`]
    const response = operation.responses[String(observed.status)]
    if (response === undefined) return [`${where}: status not listed`]
    const out: Array<string> = []
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = observed.headers.get(name)
      if (value === null) {
        if (header.required) out.push(`${where}: header ${name} missing`)
        continue
      }
      const validate = validatorAt(
        "paths",
        observed.path,
        observed.method.toLowerCase(),
        "responses",
        String(observed.status),
        "headers",
        name,
        "schema"
      )
      // Header values are text; the document describes what they hold.
      if (!validate(/^\d+$/.test(value) ? Number(value) : value)) out.push(`${where}: header ${name}=${value}`)
    }
    const type = observed.headers.get("content-type") ?? ""
    if (response.content !== undefined) {
      if (!type.startsWith("application/json")) out.push(`${where}: content-type ${type}`)
      const validate = validatorAt(
        "paths",
        observed.path,
        observed.method.toLowerCase(),
        "responses",
        String(observed.status),
        "content",
        "application/json",
        "schema"
      )
      if (!validate(observed.body))
        out.push(`${where}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(observed.body)}`)
    }
    return out
  }

  /** Whether the document accepts `body` as the JSON request body of an operation. */
  const acceptsBody = (method: string, path: string, body: unknown): boolean =>
    validatorAt("paths", path, method.toLowerCase(), "requestBody", "content", "application/json", "schema")(body)

  /**
   * Whether the document accepts `value` as the parameter `name` of an operation. The value is text, as
   * in a URL; an integer parameter reads digits as a number, as OpenAPI tools serialise one.
   */
  const acceptsParameter = (method: string, path: string, name: string, value: string): boolean => {
    const parameters = document.paths[path]?.[method.toLowerCase()]?.parameters ?? []
    const index = parameters.findIndex((p) => p.name === name)
    if (index < 0) throw new Error(`${method} ${path} has no parameter ${name}`)
    const integer = parameters[index]?.schema?.type === "integer" && /^\d+$/.test(value)
    return validatorAt(
      "paths",
      path,
      method.toLowerCase(),
      "parameters",
      String(index),
      "schema"
    )(integer ? Number(value) : value)
  }

  /** Every (method, path, status) the document lists. */
  const listed = (): ReadonlyArray<string> =>
    Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) =>
        Object.keys(operation.responses).map((status) => `${method.toUpperCase()} ${path} ${status}`)
      )
    )

  return { problems, acceptsBody, acceptsParameter, listed }
}
