// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * topo/xnic-map as a command: impossible layouts and bad input are refused
 * with a message naming the fault and a non-zero exit status; a good run
 * prints both costs and writes the rankfile and the node-rank list. The
 * tool is built from topo/'s sources under ASan and UBSan (Makefile).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define MAP "unit/xnic-map-san"

/* Run xnic-map ARGS; its output (stdout and stderr) into out; its status. */
static int run(const char *args, char *out, size_t len)
{
	char cmd[1024];
	size_t n = 0;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", MAP, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n + 1 < len && fgets(out + n, (int)(len - n), p))
		n += strlen(out + n);
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int c, n = 0;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

TEST(refusals_exit_non_zero)
{
	static const struct {
		const char *args, *want;
		int status;
	} cases[] = {
		{ "--synthetic 2,8,1,1 --tp 16 --pp 1 --dp 1",
		  "impossible layout: TP=16 is larger than the largest appliance", 1 },
		{ "--synthetic 2,8,1,1 --tp 4 --pp 2 --dp 3",
		  "4 x 2 x 3 = 24 ranks, but the topology has 16 nodes", 1 },
		{ "--synthetic 2,6,1,1 --tp 4 --pp 1 --dp 3",
		  "appliance \"a0\" has 6 nodes, not a multiple of TP=4", 1 },
		{ "--synthetic 2,2,0,0 --tp 2 --pp 1 --dp 2",
		  "no path from node \"a0n0\" to \"a1n0\"", 1 },
		{ "--synthetic 2,8,1 --tp 4 --pp 2 --dp 2", "expected A,N,U,S", 1 },
		{ "--topology /nonexistent.json --tp 1 --pp 1 --dp 1",
		  "/nonexistent.json: unable to open", 1 },
		{ "--topology / --tp 1 --pp 1 --dp 1",
		  "/: is a directory, not a topology file", 1 },
		{ "--synthetic 2,8,1,1 --tp 0 --pp 2 --dp 8", "--tp \"0\": not a positive integer", 2 },
		{ "--synthetic 2,8,1,1 --tp 2 --pp 2 --dp 4 --dp-bytes 3X",
		  "--dp-bytes \"3X\": not a byte count", 2 },
		{ "--synthetic 2,8,1,1 --tp 2 --pp 2", "--tp, --pp and --dp are required", 2 },
		{ "--tp 2 --pp 2 --dp 4", "give one of --topology and --synthetic", 2 },
	};
	char out[4096];
	unsigned int i;

	ASSERT_EQ(0, access(MAP, X_OK)) TH_LOG("build %s first", MAP);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_EQ(cases[i].status, run(cases[i].args, out, sizeof(out)))
			TH_LOG("%s: %s", cases[i].args, out);
		EXPECT_NE(NULL, strstr(out, cases[i].want))
			TH_LOG("%s: \"%s\" does not say \"%s\"", cases[i].args, out,
			       cases[i].want);
	}
}

TEST(bad_file_names_the_field)
{
	char path[] = "/tmp/map_cli_test.XXXXXX", out[4096], args[256];
	int fd = mkstemp(path);
	static const char text[] = "{\"version\": 1, \"appliances\": [{\"name\": \"a\"}],"
		" \"nodes\": [{\"name\": \"n\", \"appliance\": \"b\"}]}";

	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(text), write(fd, text, strlen(text)));
	close(fd);
	snprintf(args, sizeof(args), "--topology %s --tp 1 --pp 1 --dp 1", path);
	EXPECT_EQ(1, run(args, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "nodes[0].appliance: no appliance named \"b\""))
		TH_LOG("%s", out);
	unlink(path);
}

/* A topology without links (one node): no busiest link to name. */
TEST(single_node_has_no_busiest_link)
{
	char out[4096];

	ASSERT_EQ(0, run("--synthetic 1,1,0,0 --tp 1 --pp 1 --dp 1", out,
			 sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "topology: 1 appliances, 1 nodes, 0 switches, 0 links"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "   - -> -\n")) TH_LOG("%s", out);
}

TEST(good_run_writes_the_launcher_files)
{
	char dir[] = "/tmp/map_cli_test.XXXXXX", out[4096], args[512], path[300];
	char line[128];
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(args, sizeof(args),
		 "--synthetic 2,4,1,1 --tp 2 --pp 2 --dp 2 --rankfile %s/rankfile "
		 "--hosts %s/hosts --write-topology %s/topo.json", dir, dir, dir);
	ASSERT_EQ(0, run(args, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "constraints met"));
	EXPECT_NE(NULL, strstr(out, "cost_vs_naive "));
	snprintf(path, sizeof(path), "%s/rankfile", dir);
	EXPECT_EQ(8, count_lines(path));
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	EXPECT_STREQ("rank 0=a0n0 slot=0\n", line);
	fclose(f);
	snprintf(path, sizeof(path), "%s/hosts", dir);
	EXPECT_EQ(8, count_lines(path));
	unlink(path);
	snprintf(path, sizeof(path), "%s/rankfile", dir);
	unlink(path);

	/* the topology written reads back, and maps the same */
	snprintf(args, sizeof(args), "--topology %s/topo.json --tp 2 --pp 2 --dp 2", dir);
	EXPECT_EQ(0, run(args, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "topology: 2 appliances, 8 nodes, 3 switches"));
	snprintf(path, sizeof(path), "%s/topo.json", dir);
	unlink(path);
	rmdir(dir);
}

TEST_HARNESS_MAIN
