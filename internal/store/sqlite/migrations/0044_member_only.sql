-- Requests only a member decides (issue 14): a recovery request, and a request the
-- authority raised when a worker found that the path a delegated call lands on is not
-- plainly inside its Source. The store refuses an orchestrator's decision on one whatever
-- its caller checked. The recovery requests made before this migration are marked from
-- their request.created events.
ALTER TABLE requests ADD COLUMN member_only INTEGER NOT NULL DEFAULT 0 CHECK (member_only IN (0, 1));

UPDATE requests SET member_only = 1 WHERE EXISTS (
	SELECT 1 FROM events e
	WHERE e.type = 'request.created' AND e.data IS NOT NULL AND e.project = requests.project
		AND json_extract(CAST(e.data AS TEXT), '$.id') = requests.id
		AND json_extract(CAST(e.data AS TEXT), '$.recovery') = 1);
