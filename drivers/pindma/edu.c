// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU edu PCI device as pindma's DMA engine: real DMA through the DMA
 * API between a pinned page and the device's 4 KiB internal buffer.
 *
 * Locking: the device has one register set, one internal buffer and one
 * coherent bounce page, so whole copies (two transfers each) are serialized
 * by pindma_edu_lock, which also guards the published device pointer: remove
 * and a timed-out transfer unpublish it under the mutex, so no transfer runs
 * on a device that is going away. A transfer takes ~100 ms, so this is a
 * mutex, taken per chunk rather than per request so that one large request
 * does not starve the others, and it is never held while touching user
 * memory (a fault there could block for as long as userfaultfd likes). It
 * never nests with the handle table's lock.
 */

#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>

#include "pindma_internal.h"

#define EDU_VENDOR_ID		0x1234
#define EDU_DEVICE_ID		0x11e8

#define EDU_REG_ID		0x00
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_COUNT	0x90
#define EDU_REG_DMA_CMD		0x98

/* Set to start; the device clears it when the transfer is done. */
#define EDU_DMA_START		BIT(0)
#define EDU_DMA_TO_RAM		BIT(1)	/* clear: RAM to the device's buffer */

#define EDU_BUF_ADDR		0x40000
/*
 * The buffer is 4 KiB, but QEMU 7.2's edu aborts the whole VM on a transfer of
 * 0 bytes or one that reaches the end of its buffer, so no transfer is longer
 * than PINDMA_EDU_MAX_XFER and a full page takes two.
 */
/*
 * QEMU's edu drives 28 address bits unless started with a wider dma_mask=;
 * the lab's runner starts it with 64 and passes pindma.dma_bits=64. With the
 * narrow mask the DMA API bounces pages the device cannot reach (swiotlb).
 */
static unsigned int dma_bits = 28;
module_param(dma_bits, uint, 0444);
MODULE_PARM_DESC(dma_bits,
		 "Address bits the edu device drives (default 28, as QEMU's edu; 12-64)");

#define EDU_POLL_US		2000
#define EDU_TIMEOUT_US		(5 * USEC_PER_SEC)

struct pindma_edu {
	struct pci_dev *pdev;
	void __iomem *regs;
	void *bounce;		/* coherent page: RAM end of the transfers */
	dma_addr_t bounce_dma;
};

static DEFINE_MUTEX(pindma_edu_lock);
/*
 * Written under pindma_edu_lock; read locklessly only as a hint (INFO, engine
 * choice), which pindma_edu_copy() re-checks under the mutex.
 */
static struct pindma_edu *pindma_edu;

atomic64_t pindma_nr_edu_xfers;

bool pindma_edu_present(void)
{
	return READ_ONCE(pindma_edu);
}

/*
 * One edu transfer; the caller keeps src and dst within the device's limits
 * (see PINDMA_EDU_MAX_XFER).
 */
static int pindma_edu_xfer(struct pindma_edu *edu, u64 src, u64 dst, u32 len,
			   u32 cmd_dir)
{
	u32 cmd;
	int ret;

	lockdep_assert_held(&pindma_edu_lock);

	writeq(src, edu->regs + EDU_REG_DMA_SRC);
	writeq(dst, edu->regs + EDU_REG_DMA_DST);
	writeq(len, edu->regs + EDU_REG_DMA_COUNT);
	/* No EDU_DMA_IRQ: polling keeps the driver free of interrupt setup. */
	writel(EDU_DMA_START | cmd_dir, edu->regs + EDU_REG_DMA_CMD);
	ret = readl_poll_timeout(edu->regs + EDU_REG_DMA_CMD, cmd,
				 !(cmd & EDU_DMA_START), EDU_POLL_US,
				 EDU_TIMEOUT_US);
	if (ret) {
		/*
		 * The transfer may still happen later, into a page we are about
		 * to give back, and the device ignores new commands meanwhile:
		 * cut it off the bus and stop using it.
		 */
		pci_clear_master(edu->pdev);
		WRITE_ONCE(pindma_edu, NULL);
		dev_err(&edu->pdev->dev,
			"DMA did not complete, device no longer used\n");
		return ret;
	}
	atomic64_inc(&pindma_nr_edu_xfers);
	return 0;
}

/* Transfer between the edu buffer and part of a pinned page. */
static int pindma_edu_page_xfer(struct pindma_edu *edu, struct page *page,
				unsigned int off, unsigned int len,
				enum dma_data_direction dir)
{
	struct device *dev = &edu->pdev->dev;
	dma_addr_t addr;
	int ret;

	/*
	 * Map only the bytes moved: if the mapping is bounced (swiotlb), a
	 * whole-page DMA_FROM_DEVICE unmap would copy back over the rest of the
	 * page and undo whatever the CPU wrote there meanwhile.
	 */
	addr = dma_map_page(dev, page, off, len, dir);
	if (dma_mapping_error(dev, addr))
		return -ENOMEM;
	if (dir == DMA_FROM_DEVICE)
		ret = pindma_edu_xfer(edu, EDU_BUF_ADDR, addr, len,
				      EDU_DMA_TO_RAM);
	else
		ret = pindma_edu_xfer(edu, addr, EDU_BUF_ADDR, len, 0);
	dma_unmap_page(dev, addr, len, dir);
	return ret;
}

/*
 * Move len bytes between buf and a pinned page: DMA_FROM_DEVICE writes the
 * page, DMA_TO_DEVICE reads it. The edu buffer can only be filled by DMA, so
 * each direction takes two transfers, with the coherent bounce page as the
 * kernel's end.
 */
int pindma_edu_copy(struct page *page, unsigned int off, void *buf,
		    unsigned int len, enum dma_data_direction dir)
{
	struct pindma_edu *edu;
	int ret;

	if (mutex_lock_killable(&pindma_edu_lock))
		return -EINTR;
	edu = pindma_edu;
	if (!edu) {
		ret = -ENODEV;
		goto unlock;
	}

	if (dir == DMA_FROM_DEVICE) {
		memcpy(edu->bounce, buf, len);
		ret = pindma_edu_xfer(edu, edu->bounce_dma, EDU_BUF_ADDR,
				      len, 0);
		if (!ret)
			ret = pindma_edu_page_xfer(edu, page, off, len, dir);
	} else {
		ret = pindma_edu_page_xfer(edu, page, off, len, dir);
		if (!ret)
			ret = pindma_edu_xfer(edu, EDU_BUF_ADDR,
					      edu->bounce_dma, len,
					      EDU_DMA_TO_RAM);
		if (!ret)
			memcpy(buf, edu->bounce, len);
	}
unlock:
	mutex_unlock(&pindma_edu_lock);
	return ret;
}

static int pindma_edu_probe(struct pci_dev *pdev,
			    const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct pindma_edu *edu;
	bool published = false;
	int ret;

	edu = devm_kzalloc(dev, sizeof(*edu), GFP_KERNEL);
	if (!edu)
		return -ENOMEM;
	edu->pdev = pdev;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, BIT(0), KBUILD_MODNAME);
	if (ret)
		return ret;
	edu->regs = pcim_iomap_table(pdev)[0];

	if (dma_bits < 12 || dma_bits > 64) {
		dev_err(dev, "dma_bits=%u: must be 12 to 64\n", dma_bits);
		return -EINVAL;
	}
	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(dma_bits));
	if (ret)
		return ret;
	edu->bounce = dmam_alloc_coherent(dev, PAGE_SIZE, &edu->bounce_dma,
					  GFP_KERNEL);
	if (!edu->bounce)
		return -ENOMEM;
	pci_set_master(pdev);
	pci_set_drvdata(pdev, edu);

	dev_info(dev, "edu id %#010x\n", readl(edu->regs + EDU_REG_ID));

	/* One device buffer is all the ioctl path knows how to share. */
	mutex_lock(&pindma_edu_lock);
	if (!pindma_edu) {
		WRITE_ONCE(pindma_edu, edu);
		published = true;
	}
	mutex_unlock(&pindma_edu_lock);
	if (!published) {
		dev_info(dev, "another edu is in use, ignoring this one\n");
		return -ENODEV;
	}
	return 0;
}

static void pindma_edu_remove(struct pci_dev *pdev)
{
	struct pindma_edu *edu = pci_get_drvdata(pdev);

	/* A timed-out device was unpublished already. */
	mutex_lock(&pindma_edu_lock);
	if (pindma_edu == edu)
		WRITE_ONCE(pindma_edu, NULL);
	mutex_unlock(&pindma_edu_lock);
}

static const struct pci_device_id pindma_edu_ids[] = {
	{ PCI_DEVICE(EDU_VENDOR_ID, EDU_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, pindma_edu_ids);

static struct pci_driver pindma_edu_driver = {
	.name = KBUILD_MODNAME,
	.id_table = pindma_edu_ids,
	.probe = pindma_edu_probe,
	.remove = pindma_edu_remove,
};

int pindma_edu_register(void)
{
	return pci_register_driver(&pindma_edu_driver);
}

void pindma_edu_unregister(void)
{
	pci_unregister_driver(&pindma_edu_driver);
}
