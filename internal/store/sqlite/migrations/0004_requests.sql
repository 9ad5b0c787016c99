-- Requests a decision references (issue 14): a decision must name a recorded Request by
-- its digest and requester, so a row with another digest, or for a request never made,
-- is refused by the store whatever its caller checked. The decider must be named as a
-- member or an Agent (which kind of Agent is checked by the store's code). Requests
-- decided before this migration are recorded from their decisions; a Request still
-- pending at the upgrade has no row and cannot be decided — it expires and is settled.
CREATE TABLE requests (
	project      TEXT    NOT NULL REFERENCES projects (id),
	id           TEXT    NOT NULL,
	digest       TEXT    NOT NULL CHECK (digest <> ''),
	requested_by TEXT    NOT NULL CHECK (requested_by <> ''),
	at           INTEGER NOT NULL,
	PRIMARY KEY (project, id),
	UNIQUE (project, id, digest, requested_by)
) STRICT;

INSERT INTO requests (project, id, digest, requested_by, at)
	SELECT project, request, digest, requested_by, at FROM decisions;

CREATE TABLE decisions_v4 (
	project      TEXT    NOT NULL REFERENCES projects (id),
	request      TEXT    NOT NULL,
	digest       TEXT    NOT NULL,
	requested_by TEXT    NOT NULL,
	decided_by   TEXT    NOT NULL,
	verdict      TEXT    NOT NULL CHECK (verdict IN ('approve', 'deny')),
	at           INTEGER NOT NULL,
	PRIMARY KEY (project, request),
	FOREIGN KEY (project, request, digest, requested_by) REFERENCES requests (project, id, digest, requested_by),
	CHECK (decided_by <> requested_by),
	CHECK (decided_by LIKE 'member:_%' OR decided_by LIKE 'agent:_%')
) STRICT;

INSERT INTO decisions_v4 (project, request, digest, requested_by, decided_by, verdict, at)
	SELECT project, request, digest, requested_by, decided_by, verdict, at FROM decisions;
DROP TABLE decisions;
ALTER TABLE decisions_v4 RENAME TO decisions;
