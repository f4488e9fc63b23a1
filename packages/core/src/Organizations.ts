// Who is calling: resolves an API key or bearer token to an organisation, and says which sender
// domains that organisation may send from. The static layer reads them from configuration.
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { asciiDomain } from "./internal/address.js"
import { formatPath } from "./internal/issues.js"
import { invalidOption } from "./internal/options.js"
import { constantTimeEqual, digestOf, hashedProblem, sha256 } from "./internal/secret.js"
import { NotFound, Unauthorized, type Unavailable } from "./MailroomError.js"

/** Who is calling: an organisation's id and slug. */
export interface Principal {
  readonly orgId: string
  readonly slug: string
}

/** What a caller presents: an API key (`x-api-key`) or an access token (Bearer). */
export type Credential =
  | { readonly kind: "apiKey"; readonly value: string }
  | { readonly kind: "accessToken"; readonly value: string }

/**
 * Implementations backed by a remote store fail with `Unavailable` when it cannot be reached, so an
 * outage is answered 503, never 401 as if the credential were revoked.
 */
export interface Organizations {
  readonly authenticate: (credential: Credential) => Effect.Effect<Principal, Unauthorized | Unavailable>
  /** For in-process callers that already know which organisation they act for. */
  readonly find: (orgId: string) => Effect.Effect<Principal, NotFound | Unavailable>
  /** ASCII, lower-case domains the organisation may send from, `{slug}.{serviceDomain}` included. */
  readonly verifiedDomains: (principal: Principal) => Effect.Effect<ReadonlyArray<string>, Unavailable>
  /**
   * The organisation, when the source knows there is exactly one (`single`, or `layerStatic` with one
   * entry): in-process calls may then leave out whom they act for.
   */
  readonly sole?: Principal | undefined
}

export const Organizations: Context.Service<Organizations, Organizations> =
  Context.Service("@mailroom/core/Organizations")

/** One organisation of the static source. */
export interface OrganizationConfig {
  /** Used in storage keys: letters, digits, `_` and `-`. */
  readonly id: string
  /** A DNS label: the organisation always may send from `{slug}.{serviceDomain}`. */
  readonly slug: string
  readonly verifiedDomains?: ReadonlyArray<string>
  /** Plain keys, or `sha256:<64 hex>` (the key's SHA-256) so configuration need not hold the key itself. */
  readonly apiKeys?: ReadonlyArray<string>
  readonly accessTokens?: ReadonlyArray<string>
}

/** The static source: the service domain and the organisations. */
export interface StaticOptions {
  readonly serviceDomain: string
  readonly organizations: ReadonlyArray<OrganizationConfig>
}

/** A thrown configuration problem: the field's path and what is wrong, read as "<path>: <problem>". */
class InvalidOption extends Error {
  constructor(
    readonly path: ReadonlyArray<PropertyKey>,
    readonly problem: string
  ) {
    super(`${formatPath(path)}: ${problem}`)
  }
}

/** Ids name storage prefixes: letters, digits, `_` and `-`, at most 64. */
export const isValidId = (id: string): boolean => /^[A-Za-z0-9_-]{1,64}$/.test(id)

/** A slug is a lower-case DNS label, as it is the first label of `{slug}.{serviceDomain}`. */
export const isValidSlug = (slug: string): boolean => /^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(slug)

/** What a sender domain may be, the same whichever source says it. */
export interface DomainRules {
  /** The service domain in ASCII, lower case. */
  readonly serviceDomain: string
  /** The domain an organisation may always send from: `{slug}.{serviceDomain}`. */
  readonly own: (slug: string) => string
  /** A configured domain in the form `verifiedDomains` answers (ASCII, lower case), or why it cannot be one. */
  readonly check: (domain: string) => { readonly domain: string } | { readonly problem: string }
}

/**
 * The sender-domain rules every implementation keeps, so a domain means the same whichever source
 * it comes from. Throws when `serviceDomain` is not a domain name.
 */
export const makeDomainRules = (serviceDomain: string): DomainRules => {
  const ascii = asciiDomain(serviceDomain)
  if (ascii === undefined) throw new InvalidOption(["serviceDomain"], `"${serviceDomain}" is not a domain name`)
  return {
    serviceDomain: ascii,
    own: (slug) => `${slug}.${ascii}`,
    check: (domain) => {
      const checked = asciiDomain(domain)
      if (checked === undefined) return { problem: "not a domain name" }
      // The service domain's subdomains are the organisations' own {slug}.{serviceDomain}.
      if (checked === ascii || checked.endsWith(`.${ascii}`)) {
        return { problem: `${checked} belongs to the service domain` }
      }
      return { domain: checked }
    }
  }
}

/**
 * Organisations from configuration. Credentials are kept only as SHA-256 digests and compared in
 * constant time against every entry, so neither timing nor a memory dump gives a key away.
 * Throws on an invalid configuration (bad id or slug, a credential used twice).
 */
export const makeStatic = (options: StaticOptions): Organizations => {
  const rules = makeDomainRules(options.serviceDomain)
  const credentials: Array<{
    readonly kind: Credential["kind"]
    readonly digest: Buffer
    readonly principal: Principal
  }> = []
  const principals = new Map<string, { readonly principal: Principal; readonly domains: ReadonlyArray<string> }>()
  for (const [i, org] of options.organizations.entries()) {
    if (!isValidId(org.id)) {
      throw new InvalidOption(["organizations", i, "id"], 'must be 1-64 letters, digits, "_" or "-"')
    }
    if (!isValidSlug(org.slug)) {
      throw new InvalidOption(["organizations", i, "slug"], "must be a lower-case DNS label")
    }
    // Ids name storage prefixes, which a case-insensitive disk (macOS, Windows) would merge.
    if ([...principals.keys()].some((id) => id.toLowerCase() === org.id.toLowerCase())) {
      throw new InvalidOption(["organizations", i, "id"], `"${org.id}" is used twice (ids are compared without case)`)
    }
    if ([...principals.values()].some((p) => p.principal.slug === org.slug)) {
      throw new InvalidOption(["organizations", i, "slug"], `"${org.slug}" is used twice`)
    }
    const domains = (org.verifiedDomains ?? []).map((domain, j) => {
      const checked = rules.check(domain)
      if ("problem" in checked) throw new InvalidOption(["organizations", i, "verifiedDomains", j], checked.problem)
      return checked.domain
    })
    const principal: Principal = { orgId: org.id, slug: org.slug }
    principals.set(org.id, { principal, domains: [...domains, rules.own(org.slug)] })
    for (const [kind, field, list] of [
      ["apiKey", "apiKeys", org.apiKeys],
      ["accessToken", "accessTokens", org.accessTokens]
    ] as const) {
      for (const [j, entry] of (list ?? []).entries()) {
        // An empty entry would let an empty header in.
        if (entry.trim() === "") throw new InvalidOption(["organizations", i, field, j], "must not be empty")
        // A typo in a hash would otherwise be a key that nobody holds.
        const malformed = hashedProblem(entry)
        if (malformed !== undefined) throw new InvalidOption(["organizations", i, field, j], malformed)
        // What cannot travel in its header could never authenticate.
        const hashed = entry.startsWith("sha256:")
        if (!hashed && kind === "accessToken" && !/^[A-Za-z0-9\-._~+/]+=*$/.test(entry)) {
          throw new InvalidOption(
            ["organizations", i, field, j],
            "must be a Bearer token (letters, digits, - . _ ~ + / and trailing =)"
          )
        }
        if (!hashed && kind === "apiKey" && !/^[\x21-\x7e]+$/.test(entry)) {
          throw new InvalidOption(["organizations", i, field, j], "must be visible ASCII characters without spaces")
        }
        const digest = digestOf(entry)
        if (credentials.some((c) => c.digest.equals(digest))) {
          throw new InvalidOption(["organizations", i, field, j], "is already configured")
        }
        credentials.push({ kind, digest, principal })
      }
    }
  }

  const only = principals.size === 1 ? [...principals.values()][0]?.principal : undefined
  return {
    sole: only,
    authenticate: (credential) =>
      Effect.suspend(() => {
        if (credential.value === "")
          return Effect.fail(new Unauthorized({ message: "missing, invalid or revoked credential" }))
        const digest = sha256(credential.value)
        let found: Principal | undefined
        // No early exit: every entry is compared, whichever matches.
        for (const entry of credentials) {
          if (constantTimeEqual(entry.digest, digest) && entry.kind === credential.kind) found = entry.principal
        }
        return found === undefined
          ? Effect.fail(new Unauthorized({ message: "missing, invalid or revoked credential" }))
          : Effect.succeed(found)
      }),
    find: (orgId) =>
      Effect.suspend(() => {
        const entry = principals.get(orgId)
        return entry === undefined
          ? Effect.fail(new NotFound({ message: `no organization ${orgId}` }))
          : Effect.succeed(entry.principal)
      }),
    verifiedDomains: (principal) => Effect.sync(() => principals.get(principal.orgId)?.domains ?? [])
  }
}

/** A problem `makeStatic` or `makeSingle` threw, as the `ConfigError` naming its field. */
const asConfigError = (error: unknown): Config.ConfigError =>
  error instanceof InvalidOption
    ? invalidOption(error.path, error.problem)
    : invalidOption([], error instanceof Error ? error.message : String(error))

/** The static source; an invalid configuration fails the layer with a `ConfigError` naming the field. */
export const layerStatic = (options: StaticOptions): Layer.Layer<Organizations, Config.ConfigError> =>
  Layer.effect(Organizations, Effect.try({ try: () => makeStatic(options), catch: asConfigError }))

/** One organisation's domains and credentials. */
export interface SingleOptions {
  /** The domains the application sends from (subdomains included). */
  readonly domains: ReadonlyArray<string>
  /** API keys the HTTP API accepts (plain, or `sha256:<hex>`). Default none: in-process calls only. */
  readonly apiKeys?: ReadonlyArray<string>
  /** Bearer tokens of the `/v1` variant. Default none. */
  readonly accessTokens?: ReadonlyArray<string>
  /** The storage prefix: files are kept under `attachments/{id}/`. Default `"app"`. */
  readonly id?: string
}

// The static source needs a service domain for `{slug}.{serviceDomain}`; one that can never resolve
// stands in, and is left out of the domains answered, so only the application's own are verified.
const placeholderServiceDomain = "single.mailroom.invalid"

/** The static source's errors in the single source's own field names: `domains[1]`, `id`, `apiKeys[0]`. */
const renamingErrors = <A>(f: () => A): A => {
  try {
    return f()
  } catch (error) {
    if (!(error instanceof InvalidOption) || error.path[0] !== "organizations") throw error
    const [field, ...rest] = error.path.slice(2)
    throw new InvalidOption([field === "verifiedDomains" ? "domains" : (field ?? ""), ...rest], error.problem)
  }
}

/**
 * One organisation, for an application that sends on its own behalf: no organisation id, slug or
 * service domain to invent, and in-process calls need not say whom they act for.
 * Throws on an invalid configuration (no domain, a malformed one, a credential used twice).
 */
export const makeSingle = (options: SingleOptions): Organizations => {
  if (options.domains.length === 0) throw new InvalidOption(["domains"], "give at least one domain to send from")
  const id = options.id ?? "app"
  const inner = renamingErrors(() =>
    makeStatic({
      serviceDomain: placeholderServiceDomain,
      organizations: [
        {
          id,
          slug: "app",
          verifiedDomains: options.domains,
          ...(options.apiKeys === undefined ? {} : { apiKeys: options.apiKeys }),
          ...(options.accessTokens === undefined ? {} : { accessTokens: options.accessTokens })
        }
      ]
    })
  )
  const placeholder = `app.${placeholderServiceDomain}`
  return {
    ...inner,
    verifiedDomains: (principal) =>
      Effect.map(inner.verifiedDomains(principal), (domains) => domains.filter((d) => d !== placeholder))
  }
}

/** One organisation; an invalid configuration fails the layer with a `ConfigError` naming the field. */
export const single = (options: SingleOptions): Layer.Layer<Organizations, Config.ConfigError> =>
  Layer.effect(Organizations, Effect.try({ try: () => makeSingle(options), catch: asConfigError }))
