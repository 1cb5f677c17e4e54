-- A pause request: set without the agent's lease by `cairn pause`, cleared
-- by the run that holds the lease when it stops at its next boundary.
ALTER TABLE cairn_agents ADD COLUMN pause boolean NOT NULL DEFAULT false;
