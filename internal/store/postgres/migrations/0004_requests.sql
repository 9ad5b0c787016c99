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
	at           BIGINT  NOT NULL,
	PRIMARY KEY (project, id),
	UNIQUE (project, id, digest, requested_by)
);

-- Every Request the log holds inline, then any decided one it lacks.
INSERT INTO requests (project, id, digest, requested_by, at)
	SELECT project, j->>'id', j->>'digest', j->>'requestedBy', at
	FROM (SELECT project, at, convert_from(data, 'UTF8')::jsonb AS j
		FROM events WHERE type = 'request.created' AND data IS NOT NULL) e
	WHERE j->>'id' <> '' AND j->>'digest' <> '' AND j->>'requestedBy' <> ''
	ON CONFLICT DO NOTHING;
INSERT INTO requests (project, id, digest, requested_by, at)
	SELECT project, request, digest, requested_by, at FROM decisions
	ON CONFLICT DO NOTHING;

ALTER TABLE decisions
	ADD CONSTRAINT decisions_request FOREIGN KEY (project, request, digest, requested_by)
		REFERENCES requests (project, id, digest, requested_by),
	ADD CONSTRAINT decisions_decider CHECK (decided_by LIKE 'member:_%' OR decided_by LIKE 'agent:_%');
