package abi

// The exports of a module built for the fast mode (see the package
// documentation, "The fast mode").
const (
	// InitExport initialises a reactor module: the WASI reactor convention.
	InitExport = "_initialize"
	// CallExport serves one call; its type is () -> i32.
	CallExport = "cairn_call"
)
