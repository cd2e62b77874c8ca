"""python peak_memory.py REPORT COMMAND [ARG ...]: run COMMAND as a child process and, once it
has exited, write its peak resident memory [KiB] to REPORT and exit with its exit status.

The rusage of a child of the test process itself would not do: Linux carries a process's
maxrss across fork and exec, so a node forked from a pytest process of 1.5 GB (the URDF corpus
loaded) would report 1.5 GB whatever it used. This small process forks the node instead.
SIGINT sent to the process group reaches the node (its handler restored to the default); this
process ignores it and waits for the node's exit."""
import os
import signal
import sys

report, command = sys.argv[1], sys.argv[2:]
signal.signal(signal.SIGINT, signal.SIG_IGN)
pid = os.posix_spawn(command[0], command, os.environ, setsigdef=(signal.SIGINT,))
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as out:
    out.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
