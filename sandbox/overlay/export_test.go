package overlay

// What the package's external tests reach inside for: apply with a crash
// hook, the names Apply gives staged and temporary files, and a
// directory's version.
var (
	ApplyCrashing = apply
	ErrCrash      = errCrash
	BlobName      = blobName
	TempName      = tempName
	DirVersion    = dirVersion
)

// NodeCost is what each changed path costs of the staging limit.
const NodeCost = nodeCost

// The sentinels of a refused Apply and of a bad manifest.
var (
	ErrConflict    = errConflict
	ErrBadManifest = errBadManifest
)
