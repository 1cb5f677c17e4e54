package sandbox

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero"

	"github.com/cairnrun/cairn/abi"
)

// importList is what checkGranted reads of a compiled module's imported
// functions: whether one is of the network, and their names. wazero
// builds the list of a module's imports afresh, some ten allocations,
// each time it is asked, and every call asks; a module keeps the list
// of the compiled module it last checked.
type importList struct {
	cm    wazero.CompiledModule
	net   bool
	names []string
}

func importsOf(cm wazero.CompiledModule) *importList {
	l := &importList{cm: cm}
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		l.net = l.net || mod == abi.NetModule
		l.names = append(l.names, name)
	}
	return l
}

// importsCache is the list of one compiled module's imports, remade when
// asked about another (modules compiled for another memory limit).
type importsCache struct{ last atomic.Pointer[importList] }

func (c *importsCache) of(cm wazero.CompiledModule) *importList {
	if l := c.last.Load(); l != nil && l.cm == cm {
		return l
	}
	l := importsOf(cm)
	c.last.Store(l)
	return l
}

// checkGranted is checkGranted with the module's cached list of imports.
func (m *Module) checkGranted(cm wazero.CompiledModule, p Policy) error {
	return checkImportsGranted(m.imports.of(cm), p)
}
