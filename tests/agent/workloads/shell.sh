# An agent's shell: coreutils, busybox, sed, awk, grep, tar, gzip in pipes.
set -e
d=$(mktemp -d)
seq 1 1000 | sed 's/^/n/' | awk '{ s += substr($1, 2) } END { print s }' >"$d/sum"
[ "$(cat "$d/sum")" = 500500 ]
printf 'a\nb\nc\n' | grep -c b | tee "$d/count" >/dev/null
mkdir "$d/t" && echo x >"$d/t/f" && tar -C "$d" -czf "$d/t.tgz" t && rm -r "$d/t"
tar -C "$d" -xzf "$d/t.tgz" && gzip -dc "$d/t.tgz" | wc -c >/dev/null
sort -r "$d/t/f" | uniq | head -1 | cut -c1 | tr x y | xargs echo >/dev/null
find "$d" -name f -exec cat {} + >/dev/null; ls -la "$d" >/dev/null; stat "$d" >/dev/null
date >/dev/null; du -s "$d" >/dev/null; sha256sum "$d/t/f" >/dev/null; cp -a "$d/t" "$d/u"
mv "$d/u" "$d/v"; ln -s v "$d/w"; readlink "$d/w" >/dev/null; chmod 600 "$d/t/f"; touch "$d/t/f"
sleep 0.01; timeout 5 true; nohup true >/dev/null 2>&1; nice -n 1 true
sleep 5 & kill "$!"; wait "$!" || true
id >/dev/null; env >/dev/null; nproc >/dev/null; df /tmp >/dev/null; uname -a >/dev/null
printf 'x\n' >"$d/in"; wc -l <"$d/in" >/dev/null; diff "$d/in" "$d/in"; cmp "$d/in" "$d/in"
if command -v busybox >/dev/null; then busybox sh -c 'echo x | busybox wc -l; busybox sleep 0.01; busybox ps; busybox top -bn1 | busybox head -1' >/dev/null; fi
rm -rf "$d"
echo shell ok
