# faulthandler.dump_traceback_later: a watchdog thread dumps the stacks
# after a timeout, then the program goes on and exits with a status of its own.
import faulthandler, sys, time

faulthandler.enable()
faulthandler.dump_traceback_later(0.2, exit=False, file=sys.stdout)
end = time.process_time() + 0.4
x = 0
# One line: the dump shows the main thread at the same line whichever
# bytecode of the loop it stopped in (traced and untraced outputs compare).
while time.process_time() < end: x += 1  # noqa: E701
faulthandler.cancel_dump_traceback_later()
print("finished", x > 0)
sys.exit(3)
