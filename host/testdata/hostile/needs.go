package main

import "github.com/cairnrun/cairn/abi"

func guestNeedsRO() abi.Needs { return abi.Needs{Workspace: abi.AccessReadOnly} }
func guestNeedsRW() abi.Needs { return abi.Needs{Workspace: abi.AccessReadWrite} }
