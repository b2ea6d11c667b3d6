# Busy in a named Python function on the main thread and on a second thread.
import sys, threading, time

def inner_work(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total

def burn_python(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        inner_work(2000)

t = threading.Thread(target=burn_python, args=(0.3,), name="burner")
t.start()
burn_python(0.3)
t.join()
print("done")
