/* moat spec: a config.json for BUNDLE/rootfs, as runc spec writes, already
 * close to what the strict profile enforces. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../lib/util.h"
#include "cmd.h"

const char spec_template[]
    = "{\n"
      "  \"ociVersion\": \"1.2.0\",\n"
      "  \"process\": {\n"
      "    \"terminal\": true,\n"
      "    \"user\": { \"uid\": 0, \"gid\": 0 },\n"
      "    \"args\": [ \"sh\" ],\n"
      "    \"env\": [\n"
      "      "
      "\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
      "      \"TERM=xterm\"\n"
      "    ],\n"
      "    \"cwd\": \"/\",\n"
      "    \"capabilities\": {\n"
      "      \"bounding\": [], \"effective\": [], \"permitted\": [],\n"
      "      \"inheritable\": [], \"ambient\": []\n"
      "    },\n"
      "    \"rlimits\": [ { \"type\": \"RLIMIT_NOFILE\", \"hard\": 1024, "
      "\"soft\": 1024 } ],\n"
      "    \"noNewPrivileges\": true\n"
      "  },\n"
      "  \"root\": { \"path\": \"rootfs\", \"readonly\": true },\n"
      "  \"hostname\": \"moat\",\n"
      "  \"mounts\": [\n"
      "    { \"destination\": \"/proc\", \"type\": \"proc\", \"source\": "
      "\"proc\",\n"
      "      \"options\": [ \"nosuid\", \"noexec\", \"nodev\" ] },\n"
      "    { \"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": "
      "\"tmpfs\",\n"
      "      \"options\": [ \"nosuid\", \"strictatime\", \"mode=755\", "
      "\"size=65536k\" ] },\n"
      "    { \"destination\": \"/dev/pts\", \"type\": \"devpts\", \"source\": "
      "\"devpts\",\n"
      "      \"options\": [ \"nosuid\", \"noexec\", \"newinstance\", "
      "\"ptmxmode=0666\", \"mode=0620\", \"gid=5\" ] },\n"
      "    { \"destination\": \"/dev/shm\", \"type\": \"tmpfs\", \"source\": "
      "\"shm\",\n"
      "      \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"mode=1777\", "
      "\"size=65536k\" ] },\n"
      "    { \"destination\": \"/dev/mqueue\", \"type\": \"mqueue\", "
      "\"source\": \"mqueue\",\n"
      "      \"options\": [ \"nosuid\", \"noexec\", \"nodev\" ] },\n"
      "    { \"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": "
      "\"sysfs\",\n"
      "      \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"ro\" ] },\n"
      "    { \"destination\": \"/sys/fs/cgroup\", \"type\": \"cgroup\", "
      "\"source\": \"cgroup\",\n"
      "      \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"relatime\", "
      "\"ro\" ] }\n"
      "  ],\n"
      "  \"linux\": {\n"
      "    \"resources\": { \"devices\": [ { \"allow\": false, \"access\": "
      "\"rwm\" } ] },\n"
      "    \"namespaces\": [\n"
      "      { \"type\": \"pid\" }, { \"type\": \"network\" }, { \"type\": "
      "\"ipc\" },\n"
      "      { \"type\": \"uts\" }, { \"type\": \"mount\" }, { \"type\": "
      "\"cgroup\" }\n"
      "    ],\n"
      "    \"maskedPaths\": [\n"
      "      \"/proc/acpi\", \"/proc/asound\", \"/proc/kcore\", "
      "\"/proc/keys\",\n"
      "      \"/proc/latency_stats\", \"/proc/timer_list\", "
      "\"/proc/timer_stats\",\n"
      "      \"/proc/sched_debug\", \"/sys/firmware\", \"/proc/scsi\"\n"
      "    ],\n"
      "    \"readonlyPaths\": [\n"
      "      \"/proc/bus\", \"/proc/fs\", \"/proc/irq\", \"/proc/sys\", "
      "\"/proc/sysrq-trigger\"\n"
      "    ]\n"
      "  }\n"
      "}\n";

static int
spec_cb (void *p, int id, const char *val, struct moat_error **err)
{
  if (id == 1)
    *(const char **)p = val;
  return 0;
}

VERB (spec)
{
  static const struct cmd_opt opts[] = { { "bundle", 'b', true, 1 },
                                         { "rootless", 0, false, 2 },
                                         { NULL, 0, false, 0 } };
  const char *bundle = ".";
  cleanup_close int dfd = -1;
  int idx, r, fd;

  r = cmd_parse (argv[0], argc, argv, 1, opts, spec_cb, &bundle, &idx, err);
  if (r < 0)
    return r;
  dfd = open (bundle, O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return moat_fail (err, errno, "bundle %s", bundle);
  fd = openat (dfd, "config.json",
               O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return moat_fail (err, errno, "writing %s/config.json", bundle);
  r = write_all (fd, spec_template, sizeof (spec_template) - 1);
  close (fd);
  if (r < 0)
    return moat_fail (err, -r, "writing %s/config.json", bundle);
  return 0;
}
