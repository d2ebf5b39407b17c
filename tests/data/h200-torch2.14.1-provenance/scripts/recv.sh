# Each call: append this call's chunk of t214.tar.xz to a stream that a background (setsid) reader | xz | tar
# unpacks into /tmp/t214 (the reader outlives the call on a warm machine).
C=/tmp/t214chunks; mkdir -p $C /tmp/t214
if [ ! -f /tmp/t214.pid ]; then
  : > /tmp/t214stream
  cat > /tmp/t214reader.py <<'R'
import sys, time
n = int(sys.argv[2]); f = open(sys.argv[1], "rb"); got = 0; out = sys.stdout.buffer
while got < n:
    b = f.read(1 << 20)
    if not b: time.sleep(0.1); continue
    out.write(b); out.flush(); got += len(b)
R
  setsid sh -c 'echo $$ > /tmp/t214.pid; python3 /tmp/t214reader.py /tmp/t214stream 242025636 | xz -d | tar -x -C /tmp/t214; echo "rc=$?" > /tmp/t214.done' </dev/null >/tmp/t214.bg.log 2>&1 &
  sleep 0.5
fi
for f in .carry/c*/part.*; do [ -f "$f" ] && { cat "$f" >> /tmp/t214stream; mv "$f" $C/; }; done
ls -l $C | tail -n +2 | awk '{s+=$5} END {print "chunks received bytes", s, "files", NR}'; du -sh /tmp/t214 2>/dev/null
