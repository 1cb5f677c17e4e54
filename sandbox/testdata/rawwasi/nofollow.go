package main

// noFollowTimes sets the modification time of /work's sub, ro.txt, lfile
// and lsub to 12345 s with path_filestat_set_times without
// LOOKUP_SYMLINK_FOLLOW, then of hard (a second name of a file) without
// and with it, and prints the errno of each (see
// TestSetTimesWithoutFollowAnswersAsLinux).
func noFollowTimes() {
	for _, name := range []string{"sub", "ro.txt", "lfile", "lsub"} {
		p, n := ptr(name)
		say("nofollow-"+name, pathFilestatSetTimes(3, 0, p, n, 0, 12345e9, 4))
	}
	p, n := ptr("hard")
	say("nofollow-hard", pathFilestatSetTimes(3, 0, p, n, 0, 12345e9, 4))
	say("follow-hard", pathFilestatSetTimes(3, 1, p, n, 0, 12345e9, 4))
}
