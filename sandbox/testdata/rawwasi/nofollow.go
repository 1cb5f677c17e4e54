package main

// noFollowTimes sets the modification time of /work's sub, ro.txt, lfile,
// lsub and lhard (a second name of a symlink) to 12345 s with
// path_filestat_set_times without LOOKUP_SYMLINK_FOLLOW, then of hard (a
// second name of a file) without and with it, then with it of inside.txt/
// and made.txt/ (a file it makes) with a trailing slash, and prints the
// errno of each (see TestSetTimesWithoutFollowAnswersAsLinux).
func noFollowTimes() {
	for _, name := range []string{"sub", "ro.txt", "lfile", "lsub", "lhard"} {
		p, n := ptr(name)
		say("nofollow-"+name, pathFilestatSetTimes(3, 0, p, n, 0, 12345e9, 4))
	}
	p, n := ptr("hard")
	say("nofollow-hard", pathFilestatSetTimes(3, 0, p, n, 0, 12345e9, 4))
	say("follow-hard", pathFilestatSetTimes(3, 1, p, n, 0, 12345e9, 4))
	mf, _ := open(3, "made.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
	fdClose(mf)
	for _, name := range []string{"inside.txt/", "made.txt/"} {
		p, n := ptr(name)
		say("follow-slash-"+name[:len(name)-1], pathFilestatSetTimes(3, 1, p, n, 0, 12345e9, 4))
	}
}
