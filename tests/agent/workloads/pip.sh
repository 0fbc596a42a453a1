# An agent's pip: install a local wheel (made here, no network) and import it.
set -e
d=$(mktemp -d)
mkdir -p "$d/w/moatdemo" "$d/w/moatdemo-1.0.dist-info"
echo 'VALUE = 42' >"$d/w/moatdemo/__init__.py"
printf 'Metadata-Version: 2.1\nName: moatdemo\nVersion: 1.0\n' >"$d/w/moatdemo-1.0.dist-info/METADATA"
printf 'Wheel-Version: 1.0\nGenerator: moat\nRoot-Is-Purelib: true\nTag: py3-none-any\n' >"$d/w/moatdemo-1.0.dist-info/WHEEL"
printf 'moatdemo/__init__.py,,\nmoatdemo-1.0.dist-info/METADATA,,\nmoatdemo-1.0.dist-info/WHEEL,,\nmoatdemo-1.0.dist-info/RECORD,,\n' >"$d/w/moatdemo-1.0.dist-info/RECORD"
(cd "$d/w" && python3 -c 'import zipfile,sys,os
z = zipfile.ZipFile(sys.argv[1], "w")
for root, _, files in os.walk("."):
    for f in files: z.write(os.path.join(root, f))
z.close()' "$d/moatdemo-1.0-py3-none-any.whl")
HOME="$d" python3 -m pip install -q --no-index --no-cache-dir --disable-pip-version-check --target "$d/site" "$d/moatdemo-1.0-py3-none-any.whl"
[ "$(PYTHONPATH="$d/site" python3 -c 'import moatdemo; print(moatdemo.VALUE)')" = 42 ]
rm -rf "$d"
echo pip ok
