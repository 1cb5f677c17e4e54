package sandbox

import (
	"context"
	"fmt"
	"os"
)

// apartParentEnv set in a test binary's environment, to the path of a
// module, makes it a process that compiles the module apart, under a
// small memory limit, into the compile cache in apartCacheEnv, and exits.
const (
	apartParentEnv = "CAIRN_TEST_APART_PARENT"
	apartCacheEnv  = "CAIRN_TEST_APART_CACHE"
)

func compileApartHere(path string) int {
	ctx := context.Background()
	wasm, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rt, err := NewRuntime(ctx, Config{CacheDir: os.Getenv(apartCacheEnv)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	if _, err := rt.Compile(ctx, wasm); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
