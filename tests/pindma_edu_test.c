// SPDX-License-Identifier: GPL-2.0
/*
 * The edu engine against the device's presence: unbound from pindma through sysfs, the edu
 * engine is ENODEV and AUTO serves with the CPU; bound again, the edu engine works.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

#define NPAGES 4
#define SIZE (NPAGES * LAB_PAGE)

/* The edu device unbound from the driver (guest sysfs), and bound again afterwards. */
#define EDU_DRIVER "/sys/bus/pci/drivers/pindma"

static const char *lacks_edu(void)
{
	DIR *d = opendir(EDU_DRIVER);
	struct dirent *e;
	bool found = false;

	while (d && (e = readdir(d)))
		found |= !strncmp(e->d_name, "0000:", 5);
	if (d)
		closedir(d);
	return found ? NULL : "no edu PCI device bound to pindma: the lab's QEMU has one (vm/boot)";
}

FIXTURE(unbound)
{
	char dev[256];
	bool bound;
};

FIXTURE_SETUP(unbound)
{
	DIR *d = opendir(EDU_DRIVER);
	struct dirent *e;

	self->dev[0] = 0;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "0000:", 5))
			snprintf(self->dev, sizeof(self->dev), "%s", e->d_name);
	if (d)
		closedir(d);
	ASSERT_NE(0, self->dev[0]) TH_LOG("no edu device bound to pindma");
	ASSERT_EQ(0, lab_write_str(EDU_DRIVER "/unbind", self->dev));
	self->bound = false;
}

FIXTURE_TEARDOWN(unbound)
{
	if (self->dev[0] && !self->bound)
		lab_write_str(EDU_DRIVER "/bind", self->dev);
}

/* Without the device, the edu engine is ENODEV and AUTO falls back to the CPU; bound again, both work. */
TEST_F(unbound, edu_engine_without_the_device_is_enodev)
{
	char *buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t engine, h;
	int fd = pindma_open();
	char out[64];

	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, buf);
	EXPECT_EQ(0U, info(fd).edu_present);
	ASSERT_EQ(0, pindma_pin(fd, buf, SIZE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h));
	engine = PINDMA_ENGINE_EDU;
	EXPECT_EQ(-ENODEV, pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 0, out, 64, &engine));
	engine = PINDMA_ENGINE_AUTO;
	EXPECT_EQ(0, pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 0, out, 64, &engine));
	EXPECT_EQ((uint32_t)PINDMA_ENGINE_CPU, engine);

	ASSERT_EQ(0, lab_write_str(EDU_DRIVER "/bind", self->dev));
	self->bound = true;
	EXPECT_EQ(1U, info(fd).edu_present);
	engine = PINDMA_ENGINE_EDU;
	EXPECT_EQ(0, pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 0, out, 64, &engine));
	EXPECT_EQ(0, pindma_unpin(fd, h));
	close(fd);
	munmap(buf, SIZE);
}

LAB_HARNESS_MAIN_NEEDS(lacks_edu)
