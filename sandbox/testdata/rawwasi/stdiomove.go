package main

// stdioMoves are the runs of "rawwasi stdiomove NAME": renumberings of
// stdio, each run in a call of its own, as it leaves stdio moved. Each
// prints one line, NAME and what it got.
var stdioMoves = map[string]func(){
	// A file renumbered onto the number stderr was moved to, and then
	// renumbered on: the number a file is opened at next reads it.
	"file-onto-moved-then-on": func() {
		f, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		e1 := fdRenumber(2, f)
		g, _ := open(3, "g.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
		e2 := fdRenumber(g, f)
		h, _ := open(3, "h.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
		e3 := fdRenumber(f, h)
		k, e4 := open(3, "inside.txt", 0, rightFdRead, 0)
		s, e5 := read(k)
		say("file-onto-moved-then-on", e1, e2, e3, e4, s, e5)
	},
}

// stdioMove runs the stdio move name.
func stdioMove(name string) {
	run, ok := stdioMoves[name]
	if !ok {
		say("stdiomove", "no such move", name)
		return
	}
	run()
}
