// Package workflow runs workflows: named steps with dependencies, each an
// agent run with a prompt, a delegation of a task to a sub-agent, or one
// tool call, with the steps whose dependencies are met running in parallel
// up to a limit, and later prompts able to use earlier steps' outputs
// through the template {{steps.NAME.output}}.
//
// Run checks each step before it stores anything, for what the step needs
// that can be seen without running it (its agent file, modules, tools and
// their grants, sub-agents, model script and workspace), since a stored
// workflow keeps the workflow file it started with and a resume could not
// take a fix of it; Resume checks the steps it starts anew the same way.
//
// A workflow is durable at two levels. Each completed step is journaled
// with its output in the store (checkpoint.Workflows), the whole record
// replaced atomically; and each step that runs an agent runs a durable
// agent of its own, whose id is the workflow's id, a dot and the step's
// name. Resume skips every journaled step, resumes an agent step that was
// interrupted from its own last boundary (host.Engine.Resume, so its
// finished calls are kept and its changes applied once), and dispatches
// the rest. A step's output is read from its agent's committed state, so
// it is the same whether or not the workflow was interrupted.
//
// A step is marked begun in the record, durably, once its agent is made
// and before anything of it runs.
// Resume does not make again a step whose last attempt did what cannot be
// known: one that had begun whose agent's stored state is gone, and a
// tool step whose call was sealed after it sent a request not safe to
// repeat. The step fails saying what to check, and Options.Retry makes it
// again. A tool step made again, after its call failed, is its agent
// prompted again, so the earlier attempt stays in the agent's journal.
//
// Each run of a workflow has a token of its own, kept in its record and
// given to each step's agent in its correlation label (ID#RUN), so that a
// step agent another run under the same id left is never taken for the
// step's: Run refuses an id whose step agents are there already, and a
// step of a resume whose agent lacks the label fails, naming it. The
// record itself is checked on every read, by the store (its checksum, and
// that it holds the workflow it is read as).
//
// A tool step is an agent too: one whose model is a two-turn script that
// makes the one call and stops, so the call is journaled, sealed and
// applied exactly as a model's call is. Its output is the tool's result.
//
// A delegation step hands its task to a sub-agent that an agent file (the
// step's parent:) declares under agents:, checked, as a delegation is, to
// narrow that agent file's tools and grants. The sub-agent runs as the
// step's agent, with the task as its prompt; the workflow, not an agent,
// is what delegates, so the step's agent has no parent agent in its
// lineage.
//
// Run and Resume take the store's lock of the workflow's id for as long
// as they run, so one process drives a workflow at a time; each step's
// agent has its own lock besides. A step whose agent another process holds
// pauses the workflow (Stop.Held), as a delegation to a held sub-agent
// pauses its tree; a resume continues it once that process lets go.
package workflow
