# A SIGALRM-driven loop: setitimer ticks count work; the output depends on
# the handler running exactly as often as the timer says, and on no call
# failing with EINTR.
import signal, os, time

ticks = 0
def on_alarm(signum, frame):
    global ticks
    ticks += 1

signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
x = 0
while ticks < 30:
    x += 1
    if x % 100000 == 0:
        time.sleep(0.001)
signal.setitimer(signal.ITIMER_REAL, 0, 0)
r, w = os.pipe()
os.write(w, b"ok")
print("ticks", ticks, os.read(r, 2).decode())
print("handlers", [signal.getsignal(s) for s in (signal.SIGRTMAX - 2, signal.SIGRTMAX - 3)])
