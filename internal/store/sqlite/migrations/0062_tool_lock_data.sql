-- A tool lock keeps its whole record beside its digest: the approval its direct Action
-- needs, who locked it and when, and the descriptor the worker advertised at that digest
-- (docs/workers.md, "Direct Actions"). Rows locked before this migration have none and
-- are offered as no direct Action until they are locked again.
ALTER TABLE tool_locks ADD COLUMN data BLOB;
