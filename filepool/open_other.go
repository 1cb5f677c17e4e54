//go:build !unix

package filepool

import "os"

const openFlags = os.O_RDONLY
