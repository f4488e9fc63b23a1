// A throwaway TLS identity for servers started in tests (SMTP with STARTTLS or implicit TLS), made by
// openssl: Node can sign with a key but has no API to issue an X.509 certificate.
import { execFile } from "node:child_process"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { tempDir } from "./tempDir.ts"

export interface SelfSignedCertificate {
  /** PEM. */
  readonly key: string
  /** PEM; also what a client trusts as its CA. */
  readonly cert: string
  /** The same two as files, for servers that read paths. */
  readonly keyFile: string
  readonly certFile: string
  /** Removes the files. */
  readonly remove: () => Promise<void>
}

/** A key and a certificate for `localhost` and `127.0.0.1`, valid for a day. */
export const selfSignedCertificate = async (commonName = "localhost"): Promise<SelfSignedCertificate> => {
  const dir = await tempDir("tls")
  const keyFile = join(dir.path, "key.pem")
  const certFile = join(dir.path, "cert.pem")
  await promisify(execFile)("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    `/CN=${commonName}`,
    "-addext",
    `subjectAltName=DNS:${commonName},IP:127.0.0.1`,
    "-keyout",
    keyFile,
    "-out",
    certFile
  ])
  return {
    key: await readFile(keyFile, "utf8"),
    cert: await readFile(certFile, "utf8"),
    keyFile,
    certFile,
    remove: dir.remove
  }
}
