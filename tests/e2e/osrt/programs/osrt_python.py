# Waits a data loader makes: a sleep, a queue.get that a producer thread
# feeds, a read from a pipe a thread writes. Each in a function of its own
# (the test finds it among the wait's Python frames).
import os
import queue
import threading
import time

WAIT_S = 0.02


def nap():
    time.sleep(WAIT_S)


def wait_for_item():
    items = queue.Queue()
    producer = threading.Timer(WAIT_S, items.put, args=(1,))
    producer.start()
    item = items.get()
    producer.join()
    return item


def read_pipe():
    read_end, write_end = os.pipe()
    writer = threading.Timer(WAIT_S, os.write, args=(write_end, b"x"))
    writer.start()
    data = os.read(read_end, 1)
    writer.join()
    print("pipe", read_end)
    return data


nap()
print("item", wait_for_item())
print("read", read_pipe())
