#!/bin/bash
# report.sh SAMPLES.tsv SKIPS.tsv OUT.json [jq --arg/--argjson meta...]
# Medians, ratios and the target checks (bench/README.md) from the driver's samples (METRIC
# RUNTIME VALUE; times in us, memory in KiB): writes OUT.json, prints a table.
set -euo pipefail
samples=$1 skips=$2 out=$3
shift 3

jq -n --rawfile s "$samples" --rawfile k "$skips" "$@" '
def median: sort | if length == 0 then null
  elif length % 2 == 1 then .[length / 2 | floor]
  else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def ratio($a; $b): if $a == null or $b == null or $b == 0 then null
  else ($a / $b * 1000 | round / 1000) end;
def med($m; $rt): .metrics[$m][$rt].median;

($s | split("\n") | map(select(length > 0) | split("\t"))) as $rows
| ($rows | map(select(.[0] | endswith(".fail") | not))
  | reduce .[] as [$m, $rt, $v] ({}; .[$m][$rt] += [$v | tonumber])
  | map_values(map_values({n: length, median: median, min: min, max: max,
                           samples: .}))) as $metrics
| ($rows | map(select(.[0] | endswith(".fail")))
  | reduce .[] as [$m, $rt, $v] ({}; .[$m | rtrimstr(".fail")][$rt] += 1))
  as $fails
| {meta: ($ARGS.named | del(.s, .k)),
   metrics: $metrics,
   failures: $fails,
   skipped: ($k | split("\n") | map(select(length > 0) | split("\t")
              | {(.[0]): .[1]}) | add // {})}
# The largest of the per-verb medians: "peak resident memory of any verb".
| .metrics["rss.max_verb"] = (["moat", "crun", "runc", "base"] | map(. as $rt
    | {($rt): {n: 1, median: ([$metrics["rss.run", "rss.create", "rss.state",
        "rss.kill", "rss.start", "rss.delete"][$rt].median // empty] | max)}})
    | map(select(.[].median != null)) | add)
| (.metrics | keys | map(select(startswith("scale.create@")))
   | sort_by(ltrimstr("scale.create@") | tonumber)) as $levels
| .ratios = (.metrics | with_entries(.value as $v
    | .value = {"moat/crun": ratio($v.moat.median; $v.crun.median),
                "moat/runc": ratio($v.moat.median; $v.runc.median),
                "moat/base": ratio($v.moat.median; $v.base.median),
                "moat/floor": ratio($v.moat.median; $v.floor.median),
                "landlock on/off": ratio($v.moat.median; $v["moat-nolandlock"].median),
                "agent/default": ratio($v["moat-agent"].median; $v.moat.median)}
    | .value |= with_entries(select(.value != null)))
    | with_entries(select(.value != {})))
| . as $r
| def target($what; $value; $limit; $unit):
    {what: $what, value: $value, target: "<= \($limit)\($unit)",
     met: (if $value == null then null else $value <= $limit end)};
  .targets = [
    # CPU time (user+system) is the headline: wall time here depends on
    # what else the machine does, and on whether a runtime waits.
    target("run /bin/true CPU, back to back: moat/crun"; $r.ratios["cpu.run.b2b"]["moat/crun"]; 0.8; ""),
    target("run /bin/true CPU, \($ARGS.named.gap_ms) ms gaps: moat/crun"; $r.ratios["cpu.run"]["moat/crun"]; 0.8; ""),
    target("create+start+wait+delete CPU, back to back: moat/crun";
           $r.ratios["cpu.shim.total.b2b"]["moat/crun"]; 0.8; ""),
    target("create+start+wait+delete CPU, \($ARGS.named.gap_ms) ms gaps: moat/crun";
           $r.ratios["cpu.shim.total"]["moat/crun"]; 0.8; ""),
    target("run /bin/true wall, back to back: moat/crun"; $r.ratios["run.b2b"]["moat/crun"]; 0.8; ""),
    target("run /bin/true wall, \($ARGS.named.gap_ms) ms gaps: moat/crun"; $r.ratios.run["moat/crun"]; 0.6; ""),
    target("syscalls of one run (strace -f -c): moat/crun"; $r.ratios["syscalls.run"]["moat/crun"]; 1.0; ""),
    target("run /bin/true, docker seccomp profile: moat/crun";
           $r.ratios["run.seccomp"]["moat/crun"]; 0.8; ""),
    target("create+start+wait+delete wall, \($ARGS.named.gap_ms) ms gaps: moat/crun";
           $r.ratios["shim.total"]["moat/crun"]; 0.8; ""),
    (if $r.ratios["cpu.run.b2b"]["moat/base"] then
       target("no regression: run CPU back to back, moat/base (\($ARGS.named.baseline))";
              $r.ratios["cpu.run.b2b"]["moat/base"]; 1.0; ""),
       target("no regression: create+start+wait+delete CPU back to back, moat/base";
              $r.ratios["cpu.shim.total.b2b"]["moat/base"]; 1.0; "")
     else empty end),
    # Issue 24: the depth layers cost no measurable run CPU.
    target("run CPU, Landlock on/off (moat)";
           $r.ratios["cpu.run.depth"]["landlock on/off"]; 1.03; ""),
    target("run CPU, agent/default seccomp level (moat)";
           $r.ratios["cpu.run.depth"]["agent/default"]; 1.03; ""),
    # Issue 20: 10,000 + 10,000 list entries cost create and delete at
    # most 2 ms CPU over the default lists.
    (["moat-lists10k", "moat-egress"] | map(. as $rt
      | [$r | med("cpu.create.lists"; $rt), med("cpu.delete.lists"; $rt)]
      | if any(. == null) then null else add end)) as [$long, $short]
    | target("create + delete CPU, 10,000 + 10,000 list entries over the default lists";
             (if $long == null or $short == null then null
              else (($long - $short) / 10 | round / 100) end); 2; " ms"),
    target("peak RSS of any verb: moat/crun";
           $r.ratios["rss.max_verb"]["moat/crun"]; 1.0; ""),
    (("docker", "podman", "ctr") as $e
     | $r.ratios["engine.\($e)"] as $er
     | if $er["moat/crun"] == null and $er["moat/runc"] != null then
         target("\($e) run --rm true: moat/crun (no crun here; moat/runc = \($er["moat/runc"]))";
                null; 1.0; "")
       else target("\($e) run --rm true: moat/crun"; $er["moat/crun"]; 1.0; "")
       end),
    # bench/README.md: 256 KiB (this line checked 512 until round ten).
    target("smallest memory limit running true (moat)";
           med("memlimit"; "moat"); 256; " KiB"),
    (if ($levels | length) > 1 then
       target("create at \($levels[-1] | ltrimstr("scale.create@")) running / at \($levels[0] | ltrimstr("scale.create@")) (moat)";
              ratio(med($levels[-1]; "moat"); med($levels[0]; "moat")); 1.2; "")
     else empty end),
    (if ($levels | length) > 1 then
       target("  the same in CPU time (moat)";
              ratio(med("scale.cpu." + ($levels[-1] | ltrimstr("scale.")); "moat");
                    med("scale.cpu." + ($levels[0] | ltrimstr("scale.")); "moat")); 1.2; "")
     else empty end),
    target("scale: failures + leftovers (moat)";
           ([med("scale.failures"; "moat"), med("scale.left_statedirs"; "moat"),
             med("scale.left_cgroups"; "moat"), med("scale.left_mounts"; "moat"),
             med("scale.procs_left"; "moat")] | if any(. == null) then null
             else add end); 0; "")
  ]
# The run figure by a harness moat does not own: hyperfine against the
# driver, back to back, wall and CPU, moat and crun.
| .crosscheck = [("moat", "crun") as $rt
    | ("run.b2b", "cpu.run.b2b") as $m
    | {runtime: $rt, metric: $m, driver: med($m; $rt),
       hyperfine: med("hyperfine." + $m; $rt)}
    | select(.driver != null and .hyperfine != null)
    | .ratio = ratio(.hyperfine; .driver)
    | .agree = (.ratio >= 0.85 and .ratio <= 1.15)]
' >"$out"

# The table: medians, ratios.
jq -r '
def ms: if . == null then "-" else (. / 1000 * 100 | round / 100 | tostring) end;
def kb: if . == null then "-" else (. | round | tostring) end;
def cell($m; $rt; f): .metrics[$m][$rt].median | f;
def rat($m; $k): .ratios[$m][$k] // "-" | tostring;
def n: if . == null then "-" else tostring end;
def row($title; $m; f):
  [$title, cell($m; "floor"; f), cell($m; "moat"; f), cell($m; "crun"; f),
   cell($m; "runc"; f), rat($m; "moat/crun"), rat($m; "moat/runc"),
   rat($m; "moat/floor"), cell($m; "base"; f), rat($m; "moat/base")] | @tsv;
(["what (median)", "floor", "moat", "crun", "runc", "moat/crun", "moat/runc",
  "moat/floor", "base", "moat/base"] | @tsv),
row("run /bin/true CPU, back to back (ms)"; "cpu.run.b2b"; ms),
row("run /bin/true CPU, \(.meta.gap_ms) ms gaps (ms)"; "cpu.run"; ms),
row("create+start+wait+delete CPU, b2b (ms)"; "cpu.shim.total.b2b"; ms),
row("create+start+wait+delete CPU, gaps (ms)"; "cpu.shim.total"; ms),
row("  create CPU, gaps (ms)"; "cpu.create"; ms),
row("  start CPU, gaps (ms)"; "cpu.start"; ms),
row("  delete CPU, gaps (ms)"; "cpu.delete"; ms),
row("run /bin/true wall, back to back (ms)"; "run.b2b"; ms),
row("  hyperfine -N, back to back (ms)"; "hyperfine.run.b2b"; ms),
row("  hyperfine -N, its CPU (ms, mean)"; "hyperfine.cpu.run.b2b"; ms),
row("run /bin/true wall, \(.meta.gap_ms) ms gaps (ms)"; "run"; ms),
row("syscalls of one run (strace -f -c)"; "syscalls.run"; n),
row("run, docker seccomp profile (ms)"; "run.seccomp"; ms),
(["run CPU b2b: moat, Landlock off, agent level (ms)",
  (.metrics["cpu.run.depth"] // {} | [.moat.median, .["moat-nolandlock"].median,
   .["moat-agent"].median] | map(ms) | join(" / ")),
  "on/off \(.ratios["cpu.run.depth"]["landlock on/off"] // "-")",
  "agent/default \(.ratios["cpu.run.depth"]["agent/default"] // "-")"] | @tsv),
row("create+start+wait+delete wall, b2b (ms)"; "shim.total.b2b"; ms),
row("create+start+wait+delete wall, gaps (ms)"; "shim.total"; ms),
row("  create (ms)"; "shim.create"; ms),
row("  start (ms)"; "shim.start"; ms),
row("  wait (ms)"; "shim.wait"; ms),
row("  delete (ms)"; "shim.delete"; ms),
row("state (ms)"; "shim.state"; ms),
row("kill (ms)"; "shim.kill"; ms),
row("peak RSS run (KiB)"; "rss.run"; kb),
row("peak RSS create (KiB)"; "rss.create"; kb),
row("peak RSS state (KiB)"; "rss.state"; kb),
row("peak RSS kill (KiB)"; "rss.kill"; kb),
row("peak RSS start (KiB)"; "rss.start"; kb),
row("peak RSS delete (KiB)"; "rss.delete"; kb),
row("peak RSS any verb (KiB)"; "rss.max_verb"; kb),
row("peak RSS container init (KiB)"; "rss.init"; kb),
row("smallest memory limit (KiB)"; "memlimit"; kb),
row("  binary search (3 runs in a row)"; "memlimit.search"; kb),
row("  rechecks failing (of 5)"; "memlimit.recheck_failures"; kb),
((.metrics | keys | map(select(startswith("scale.create@")))
  | sort_by(ltrimstr("scale.create@") | tonumber)[]) as $m
 | row("create at \($m | ltrimstr("scale.create@")) running (ms)"; $m; ms),
   row("  its CPU time (ms)"; "scale.cpu.\($m | ltrimstr("scale."))"; ms)),
row("delete all, scale (ms)"; "scale.delete_all"; ms),
row("scale failures"; "scale.failures"; kb),
row("left: state dirs"; "scale.left_statedirs"; kb),
row("left: cgroups"; "scale.left_cgroups"; kb),
row("left: mounts"; "scale.left_mounts"; kb),
row("left: processes"; "scale.procs_left"; kb),
(("docker", "podman", "ctr") as $e
 | if .metrics["engine.\($e)"] then row("\($e) run --rm true (ms)"; "engine.\($e)"; ms)
   elif .failures["engine.\($e)"] then (["\($e) run --rm true", "every run failed: \(.failures["engine.\($e)"] | tojson) (driver.log)"] | @tsv)
   else (["\($e) run --rm true", "skipped: \(.skipped["engine.\($e)"] // .skipped.engines // "?")"] | @tsv) end)
' "$out" | column -t -s $'\t'

echo
jq -r '"targets (bench/README.md):",
  (.targets[] | "  \(if .met == true then "MET " elif .met == false then "MISS" else "n/a " end)  \(.what) = \(.value // "-") (target \(.target))"),
  (if (.failures | length) > 0 then "failures: \(.failures | tojson)" else empty end),
  "hyperfine cross-check of run, back to back (hyperfine / driver):",
  (if (.crosscheck | length) == 0 then "  n/a (\(.skipped.hyperfine // "no samples"))" else empty end),
  (.crosscheck[] | "  \(if .agree then "agree   " else "DISAGREE" end)  \(.runtime) \(.metric): \(.ratio)\(if .agree then "" else " (more than 15 % apart: trust neither figure alone)" end)")' "$out"
