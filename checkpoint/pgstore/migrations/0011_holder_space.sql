-- Version 11: where a lease's holder's pid means that process: its
-- kernel's boot and its PID namespace (lease.go, thisSpace). A holder on
-- a host of the same name whose pid no process here has is judged gone
-- only when it was in this same space; '' (a holder of an older cairn, or
-- of a system that cannot say) is judged gone by the host name alone.
ALTER TABLE cairn_leases ADD COLUMN holder_space text NOT NULL DEFAULT '';
