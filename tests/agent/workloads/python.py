# An agent's Python: the standard library's heavy users, each exercised.
import array, asyncio, json, multiprocessing, os, signal, socket, sqlite3
import subprocess, tempfile, threading, time, zlib


async def echo_once():
    async def handle(r, w):
        w.write(await r.read(5))
        await w.drain()
        w.close()
    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"hello")
    data = await r.read(5)
    w.close()
    srv.close()
    await srv.wait_closed()
    return data


def square(x):
    return x * x


def main():
    assert asyncio.run(echo_once()) == b"hello"
    assert subprocess.run(["sh", "-c", "echo sub"], capture_output=True).stdout == b"sub\n"
    with multiprocessing.Pool(2) as p:
        assert p.map(square, range(8))[7] == 49
    q = multiprocessing.Queue()
    pr = multiprocessing.Process(target=q.put, args=(1,))
    pr.start(); pr.join(); assert q.get() == 1
    out = []
    ts = [threading.Thread(target=out.append, args=(i,)) for i in range(4)]
    [t.start() for t in ts]; [t.join() for t in ts]
    assert sorted(out) == [0, 1, 2, 3]
    a, b = socket.socketpair(); a.sendall(b"x"); assert b.recv(1) == b"x"
    # An fd passed over a unix socket (multiprocessing's reduction does).
    r, w = os.pipe()
    a.sendmsg([b"f"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r]))])
    msg, anc, _, _ = b.recvmsg(1, socket.CMSG_SPACE(4))
    assert msg == b"f" and anc
    # A child in a session of its own, its group signalled; a timer.
    p = subprocess.Popen(["sleep", "5"], start_new_session=True)
    assert os.getsid(p.pid) == p.pid == os.getpgid(p.pid)
    os.killpg(p.pid, signal.SIGTERM); p.wait()
    signal.signal(signal.SIGALRM, lambda *_: None)
    signal.setitimer(signal.ITIMER_REAL, 0.01); time.sleep(0.05)
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.bind(("::1", 0)); s.close()
    with tempfile.TemporaryDirectory() as d:
        db = sqlite3.connect(os.path.join(d, "t.db"))
        db.execute("create table t (x)"); db.execute("insert into t values (1)"); db.commit()
        assert db.execute("select x from t").fetchone() == (1,)
        with open(os.path.join(d, "j.json"), "w") as f:
            json.dump({"a": [1, 2]}, f)
        assert json.load(open(os.path.join(d, "j.json")))["a"] == [1, 2]
    assert zlib.decompress(zlib.compress(b"z" * 1000)) == b"z" * 1000
    print("python ok")


if __name__ == "__main__":
    main()
