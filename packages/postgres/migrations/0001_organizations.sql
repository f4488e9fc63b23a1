-- mailroom's organisations: who may call the API (API keys, access tokens) and which sender domains
-- each organisation has verified. The workspace application writes these tables; mailroom only reads.
--
-- Apply with `npx mailroom-postgres migrate` or `PostgresMigrations.run`, which record it in the
-- table mailroom_migrations, or with your own migration tool (then never with both).
-- The runner sends the statements to the server one by one, so none uses dollar quoting ($$).

CREATE TABLE mailroom_organizations (
  -- Used in storage keys (attachments/{id}/...): letters, digits, "_" and "-".
  id text PRIMARY KEY CONSTRAINT mailroom_organizations_id_shape CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  -- A DNS label: the organisation may always send from {slug}.{serviceDomain}.
  slug text NOT NULL UNIQUE CONSTRAINT mailroom_organizations_slug_shape
    CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Ids name storage prefixes, which a case-insensitive disk (macOS, Windows) would merge.
CREATE UNIQUE INDEX mailroom_organizations_id_without_case ON mailroom_organizations (lower(id));

-- A key is never stored: only the lower-case hex SHA-256 of its UTF-8 bytes, as a workspace
-- application computes it once, when it shows the key to its owner.
CREATE TABLE mailroom_api_keys (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  organization_id text NOT NULL REFERENCES mailroom_organizations (id) ON DELETE CASCADE,
  sha256 text NOT NULL UNIQUE CONSTRAINT mailroom_api_keys_sha256_shape CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  -- What the workspace shows its owner ("production", "mr_live_...x7Qa"); mailroom never reads it.
  name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- The key stops working at this time: now() to revoke it, a later time to let a rolled key live on.
  revoked_at timestamptz
);

CREATE INDEX mailroom_api_keys_organization ON mailroom_api_keys (organization_id);

-- The Bearer tokens of the v1 variant, kept exactly as API keys are.
CREATE TABLE mailroom_access_tokens (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  organization_id text NOT NULL REFERENCES mailroom_organizations (id) ON DELETE CASCADE,
  sha256 text NOT NULL UNIQUE CONSTRAINT mailroom_access_tokens_sha256_shape CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

CREATE INDEX mailroom_access_tokens_organization ON mailroom_access_tokens (organization_id);

-- Sender domains, in ASCII (punycode) and lower case: "xn--bcher-kva.example", not "Bücher.example".
-- Deleting the row unverifies the domain.
CREATE TABLE mailroom_verified_domains (
  organization_id text NOT NULL REFERENCES mailroom_organizations (id) ON DELETE CASCADE,
  domain text NOT NULL CONSTRAINT mailroom_verified_domains_domain_shape
    CHECK (length(domain) <= 253 AND domain ~ '^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  verified_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, domain)
);
