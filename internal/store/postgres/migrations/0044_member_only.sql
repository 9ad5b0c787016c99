-- Requests only a member decides (issue 14): a recovery request, and a request the
-- authority raised when a worker found that the path a delegated call lands on is not
-- plainly inside its Source. The store refuses an orchestrator's decision on one whatever
-- its caller checked. The recovery requests made before this migration are marked from
-- their request.created events.
ALTER TABLE requests ADD COLUMN member_only INTEGER NOT NULL DEFAULT 0 CHECK (member_only IN (0, 1));

UPDATE requests r SET member_only = 1
	FROM (SELECT project, convert_from(data, 'UTF8')::jsonb AS j
		FROM events WHERE type = 'request.created' AND data IS NOT NULL) e
	WHERE e.project = r.project AND e.j->>'id' = r.id AND e.j->>'recovery' = 'true';
