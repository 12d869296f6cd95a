// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs demo's rows over Soft-RoCE, each asserted from what it printed: the observed
 * verdict (from what the HCA and the parent saw) must be the expected one, and
 * ibv_is_fork_initialized() and `rdma system show` must tell the truth about the switch.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "expect.h"
#include "harness.h"

FIXTURE(row)
{
	char out[4096];
	int status;
};

FIXTURE_VARIANT(row)
{
	const char *name;
	const char *fork_status;
	const char *copy_on_fork;
};

FIXTURE_VARIANT_ADD(row, switch_off) {
	"switch-off", "UNNEEDED", "copy-on-fork on" };
FIXTURE_VARIANT_ADD(row, switch_on) {
	"switch-on", "DISABLED", "copy-on-fork off" };
FIXTURE_VARIANT_ADD(row, switch_on_ibv_fork_init) {
	"switch-on-ibv_fork_init", "ENABLED", "copy-on-fork off" };
FIXTURE_VARIANT_ADD(row, switch_on_rdmav_fork_safe) {
	"switch-on-RDMAV_FORK_SAFE", "ENABLED", "copy-on-fork off" };
FIXTURE_VARIANT_ADD(row, switch_on_subpage_mr) {
	"switch-on-subpage-mr", "ENABLED", "copy-on-fork off" };
FIXTURE_VARIANT_ADD(row, switch_off_subpage_mr) {
	"switch-off-subpage-mr", "UNNEEDED", "copy-on-fork on" };
FIXTURE_VARIANT_ADD(row, switch_on_fork_init_after_reg) {
	"switch-on-fork_init-after-reg", "DISABLED", "copy-on-fork off" };
FIXTURE_VARIANT_ADD(row, switch_off_fork_init_after_reg) {
	"switch-off-fork_init-after-reg", "UNNEEDED", "copy-on-fork on" };
FIXTURE_VARIANT_ADD(row, switch_off_free_before_dereg) {
	"switch-off-free-before-dereg", "UNNEEDED", "copy-on-fork on" };
FIXTURE_VARIANT_ADD(row, switch_off_mr_splits_vmas) {
	"switch-off-mr-splits-vmas", "UNNEEDED", "copy-on-fork on" };
FIXTURE_VARIANT_ADD(row, switch_off_mr_splits_vmas_no_init) {
	"switch-off-mr-splits-vmas-no-init", "UNNEEDED", "copy-on-fork on" };
FIXTURE_VARIANT_ADD(row, switch_off_hugetlb_mr) {
	"switch-off-hugetlb-mr", "UNNEEDED", "copy-on-fork on" };
FIXTURE_VARIANT_ADD(row, switch_off_hugetlb_mr_hp_safe) {
	"switch-off-hugetlb-mr-hp-safe", "UNNEEDED", "copy-on-fork on" };

FIXTURE_SETUP(row)
{
	char cmd[128];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "/lab/demo/verbs_demo --only %s 2>&1", variant->name);
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	n = fread(self->out, 1, sizeof(self->out) - 1, p);
	self->out[n] = 0;
	self->status = pclose(p);
	TH_LOG("%s", self->out);
}

FIXTURE_TEARDOWN(row)
{
}

/*
 * The row line: name, switch, fork support, is_fork_init, then two observations (hca->par and
 * par->hca, or a cost row's MR length and whether its page is dc), observed, ...
 */
TEST_F(row, observed_verdict_is_expected)
{
	char *line = strstr(self->out, variant->name);
	char name[64], sw[8], support[32], status[16], hp[8], ph[8], observed[16];

	if (strncmp(variant->name, "switch-off", 10))
		LAB_NEEDS_PATCH("0002", "vm.fork_share_pinned");
	ASSERT_NE(NULL, line);
	ASSERT_EQ(7, sscanf(line, "%63s %7s %31s %15s %7s %7s %15s", name, sw, support, status, hp,
			    ph, observed));
	ASSERT_NE(NULL, lab_expect(variant->name)) TH_LOG("no expectation on %s", lab_kernel_release());
	EXPECT_STREQ(lab_expect(variant->name), observed);
	EXPECT_STREQ(variant->fork_status, status) TH_LOG("ibv_is_fork_initialized()");
	EXPECT_TRUE(WIFEXITED(self->status) && WEXITSTATUS(self->status) == 0);
}

TEST_F(row, rdma_system_show_tells_the_truth)
{
	if (strncmp(variant->name, "switch-off", 10))
		LAB_NEEDS_PATCH("0002", "vm.fork_share_pinned");
	EXPECT_NE(NULL, strstr(self->out, variant->copy_on_fork));
}

LAB_HARNESS_MAIN
