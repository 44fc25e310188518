#!/usr/bin/env python3
# Copyright: see the shardid LICENSE.
#
# bench/relay.py: a TCP relay on loopback that holds every chunk it
# forwards for a fixed delay, in each direction: a standby 10 ms away
# (--delay-ms 10) for bench/shards.sh --relay-ms.  Order is kept; nothing
# is dropped.  It listens on 127.0.0.1 only, prints its port on its first
# line, and runs until it is killed (SIGTERM).
#
# Usage: bench/relay.py --to PORT --delay-ms MS [--port PORT]

import argparse
import asyncio
import signal
import sys


async def pipe(reader, writer, delay):
    """Copy reader to writer, each chunk delay seconds after it arrived."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()

    sender = asyncio.ensure_future(deliver())
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            queue.put_nowait((loop.time() + delay, data))
    finally:
        queue.put_nowait((0, None))
        try:
            await sender
        except (ConnectionError, asyncio.CancelledError):
            pass
        writer.close()


async def main():
    parser = argparse.ArgumentParser(description="a TCP relay that delays what it forwards")
    parser.add_argument("--to", type=int, required=True, help="the port on 127.0.0.1 to relay to")
    parser.add_argument("--delay-ms", type=float, required=True, help="the delay, each way")
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (default: any free one)")
    args = parser.parse_args()
    if args.delay_ms < 0 or not 1 <= args.to <= 65535:
        parser.error("--delay-ms must be 0 or more, --to a port")
    delay = args.delay_ms / 1000.0

    async def serve(client_reader, client_writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", args.to)
        except OSError:
            client_writer.close()
            return
        try:
            await asyncio.gather(pipe(client_reader, up_writer, delay),
                                 pipe(up_reader, client_writer, delay),
                                 return_exceptions=True)
        except asyncio.CancelledError:
            pass                # stopped: the connections go with it

    server = await asyncio.start_server(serve, "127.0.0.1", args.port)
    print(server.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set_result, None)
    async with server:
        await stop


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(130)
