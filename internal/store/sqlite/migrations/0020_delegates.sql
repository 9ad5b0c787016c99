-- Delegates (issue 15): a credential a member makes for an assistant that acts for the
-- member in one project, for a bounded life. Only the digest of its token is kept.
CREATE TABLE delegates (
	id           TEXT PRIMARY KEY,
	member       TEXT    NOT NULL REFERENCES members (id),
	project      TEXT    NOT NULL REFERENCES projects (id),
	name         TEXT    NOT NULL CHECK (name <> ''),
	token_digest BLOB    NOT NULL UNIQUE,
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	revoked_at   INTEGER,
	UNIQUE (member, name)
) STRICT;
CREATE INDEX delegates_member ON delegates (member);
