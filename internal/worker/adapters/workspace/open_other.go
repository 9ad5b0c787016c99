//go:build !unix

package workspace

import "os"

const readFlags = os.O_RDONLY
