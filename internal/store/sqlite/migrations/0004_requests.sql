-- Requests a decision references (issue 14): a decision must name a recorded Request by
-- its digest and requester, so a row with another digest, or for a request never made,
-- is refused by the store whatever its caller checked. The decider must be named as a
-- member or an Agent (which kind of Agent is checked by the store's code). The Requests
-- made before this migration are recorded from their request.created events (those whose
-- data is inline; a Request too large for that has no row, cannot be decided, and expires)
-- and from their decisions.
CREATE TABLE requests (
	project      TEXT    NOT NULL REFERENCES projects (id),
	id           TEXT    NOT NULL,
	digest       TEXT    NOT NULL CHECK (digest <> ''),
	requested_by TEXT    NOT NULL CHECK (requested_by <> ''),
	at           INTEGER NOT NULL,
	PRIMARY KEY (project, id),
	UNIQUE (project, id, digest, requested_by)
) STRICT;

-- Every Request the log holds inline, then any decided one it lacks.
INSERT OR IGNORE INTO requests (project, id, digest, requested_by, at)
	SELECT project, json_extract(CAST(data AS TEXT), '$.id'), json_extract(CAST(data AS TEXT), '$.digest'),
		json_extract(CAST(data AS TEXT), '$.requestedBy'), at
	FROM events WHERE type = 'request.created' AND data IS NOT NULL;
INSERT OR IGNORE INTO requests (project, id, digest, requested_by, at)
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
