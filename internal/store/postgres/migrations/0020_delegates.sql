-- Delegates (issue 15): a credential a member makes for an assistant that acts for the
-- member in one project, for a bounded life. Only the digest of its token is kept.
CREATE TABLE delegates (
	id           TEXT PRIMARY KEY,
	member       TEXT    NOT NULL REFERENCES members (id),
	project      TEXT    NOT NULL REFERENCES projects (id),
	name         TEXT    NOT NULL CHECK (name <> ''),
	token_digest BYTEA    NOT NULL UNIQUE,
	created_at   BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL,
	revoked_at   BIGINT,
	UNIQUE (member, name)
);
CREATE INDEX delegates_member ON delegates (member);
