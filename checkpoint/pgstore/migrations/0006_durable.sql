-- Version 6: how far each agent's journal was durable, so that rows
-- deleted from its end are found as lost, as a directory store's commit
-- mark finds a journal cut short. durable is the sequence number after
-- the last row of the last transaction committed durably (a Sync or a
-- Commit); 0 claims nothing, as for an agent written before this version.
ALTER TABLE cairn_agents ADD COLUMN durable bigint NOT NULL DEFAULT 0;
