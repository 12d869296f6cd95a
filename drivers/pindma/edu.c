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

#include <linux/completion.h>
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
/*
 * writeq() where the architecture has none: two 32-bit writes, low half
 * first. edu takes a 4-byte write at 0x80 as the whole value and ignores one
 * at 0x84, so such a kernel drives 32 address bits, as the width probe finds.
 */
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/interrupt.h>
#include <linux/ioport.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/swiotlb.h>

#include "pindma_internal.h"

#define EDU_VENDOR_ID		0x1234
#define EDU_DEVICE_ID		0x11e8

#define EDU_REG_ID		0x00
#define EDU_REG_IRQ_STATUS	0x24
#define EDU_REG_IRQ_ACK		0x64
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_COUNT	0x90
#define EDU_REG_DMA_CMD		0x98

/* Set to start; the device clears it when the transfer is done. */
#define EDU_DMA_START		BIT(0)
#define EDU_DMA_TO_RAM		BIT(1)	/* clear: RAM to the device's buffer */
#define EDU_DMA_IRQ		BIT(2)	/* interrupt when done */
#define EDU_IRQ_DMA		BIT(8)	/* in the status: a transfer is done */

#define EDU_BUF_ADDR		0x40000
/*
 * The buffer is 4 KiB, but QEMU 7.2's edu aborts the whole VM on a transfer of
 * 0 bytes or one that reaches the end of its buffer, so no transfer is longer
 * than PINDMA_EDU_MAX_XFER and a full page takes two.
 */
/*
 * QEMU's edu drives 28 address bits unless started with a wider dma_mask=;
 * the lab's runner starts it with 64 and passes pindma.dma_bits=64. With the
 * narrow mask the DMA API bounces pages the device cannot reach through
 * swiotlb, where swiotlb is on and its pool within reach; where not, such a
 * page is refused (pindma_edu_reaches()). A dma_bits wider than the device
 * drives is refused at probe (pindma_edu_check_width()).
 */
static unsigned int dma_bits = 28;
module_param(dma_bits, uint, 0444);
MODULE_PARM_DESC(dma_bits,
		 "Address bits the edu device drives (default 28, as QEMU's edu; 12-64)");

#define EDU_TIMEOUT		(5 * HZ)

struct pindma_edu {
	struct pci_dev *pdev;
	void __iomem *regs;
	struct completion done;	/* the transfer's interrupt came */
	void *bounce;		/* coherent page: RAM end of the transfers */
	dma_addr_t bounce_dma;
	bool swiotlb_reaches;	/* swiotlb bounces where the device reaches */
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
 * (see PINDMA_EDU_MAX_XFER). Its end is the device's interrupt, which the
 * kernel counts in /proc/interrupts: the tests take that count, not this
 * driver's, as the evidence that the device moved the bytes. Counted here
 * too, module-wide and into *xfers, if given.
 */
static int pindma_edu_xfer(struct pindma_edu *edu, u64 src, u64 dst, u32 len,
			   u32 cmd_dir, atomic64_t *xfers)
{
	lockdep_assert_held(&pindma_edu_lock);

	reinit_completion(&edu->done);
	writeq(src, edu->regs + EDU_REG_DMA_SRC);
	writeq(dst, edu->regs + EDU_REG_DMA_DST);
	writeq(len, edu->regs + EDU_REG_DMA_COUNT);
	writel(EDU_DMA_START | EDU_DMA_IRQ | cmd_dir, edu->regs + EDU_REG_DMA_CMD);
	if (!wait_for_completion_timeout(&edu->done, EDU_TIMEOUT)) {
		/*
		 * The transfer may still happen later, into a page we are about
		 * to give back, and the device ignores new commands meanwhile:
		 * cut it off the bus and stop using it (a device still being
		 * probed is not the published one).
		 */
		pci_clear_master(edu->pdev);
		if (pindma_edu == edu)
			WRITE_ONCE(pindma_edu, NULL);
		dev_err(&edu->pdev->dev,
			"DMA did not complete, device no longer used\n");
		return -ETIMEDOUT;
	}
	atomic64_inc(&pindma_nr_edu_xfers);
	if (xfers)
		atomic64_inc(xfers);
	return 0;
}

/* The device's MSI: acknowledge it, and end the transfer waiting for it. */
static irqreturn_t pindma_edu_irq(int irq, void *data)
{
	struct pindma_edu *edu = data;
	u32 status = readl(edu->regs + EDU_REG_IRQ_STATUS);

	if (!status)
		return IRQ_NONE;
	writel(status, edu->regs + EDU_REG_IRQ_ACK);
	if (status & EDU_IRQ_DMA)
		complete(&edu->done);
	return IRQ_HANDLED;
}

/*
 * Whether swiotlb can bounce for the device: it is on for it, and its pool
 * lies within the device's mask. A slot beyond the mask has swiotlb_map() warn
 * of an overflow instead, as when a pool below 4 GiB serves a 28-bit device.
 */
static bool pindma_edu_swiotlb_reaches(struct device *dev)
{
#ifdef CONFIG_SWIOTLB
	struct io_tlb_mem *mem = dev->dma_io_tlb_mem;
	phys_addr_t last;

	/* is_swiotlb_active(), which 6.12 no longer exports to modules */
	if (!mem || !mem->nslabs)
		return false;
#ifdef PINDMA_SWIOTLB_POOLS	/* 6.6 and later, see Kbuild */
	last = mem->defpool.end - 1;
#ifdef CONFIG_SWIOTLB_DYNAMIC
	/* Pools it adds later come from below this limit. */
	if (mem->can_grow)
		last = max_t(phys_addr_t, last, mem->phys_limit);
#endif
#else
	last = mem->end - 1;
#endif
	return dma_capable(dev, phys_to_dma_unencrypted(dev, last), 1, true);
#else
	return false;
#endif
}

/*
 * Whether the DMA API maps these bytes for the device: directly, when their
 * bus address is within its mask (and swiotlb is not forced on it), or
 * through a swiotlb bounce buffer the device reaches. dma_map_page() answers
 * neither but with a WARN (an overflow) and an error, which any user could
 * reach with a page of theirs beyond a narrow dma_bits in a guest where x86
 * leaves swiotlb off (less than 4 GiB of RAM): so it is asked first.
 */
static bool pindma_edu_reaches(struct pindma_edu *edu, struct page *page,
			       unsigned int off, unsigned int len)
{
	struct device *dev = &edu->pdev->dev;
	dma_addr_t addr = phys_to_dma(dev, page_to_phys(page) + off);

	if (!is_swiotlb_force_bounce(dev) && dma_capable(dev, addr, len, true))
		return true;
	return edu->swiotlb_reaches;
}

/* Transfer between the edu buffer and part of a pinned page. */
static int pindma_edu_page_xfer(struct pindma_edu *edu, struct page *page,
				unsigned int off, unsigned int len,
				enum dma_data_direction dir, atomic64_t *xfers)
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
				      EDU_DMA_TO_RAM, xfers);
	else
		ret = pindma_edu_xfer(edu, addr, EDU_BUF_ADDR, len, 0, xfers);
	dma_unmap_page(dev, addr, len, dir);
	return ret;
}

/*
 * Move len bytes between buf and a pinned page: DMA_FROM_DEVICE writes the
 * page, DMA_TO_DEVICE reads it. The edu buffer can only be filled by DMA, so
 * each direction takes two transfers, with the coherent bounce page as the
 * kernel's end; both are counted into *xfers. A page the device cannot reach
 * is refused before either.
 */
int pindma_edu_copy(struct page *page, unsigned int off, void *buf,
		    unsigned int len, enum dma_data_direction dir,
		    atomic64_t *xfers)
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
	if (!pindma_edu_reaches(edu, page, off, len)) {
		ret = -ENXIO;
		goto unlock;
	}

	if (dir == DMA_FROM_DEVICE) {
		memcpy(edu->bounce, buf, len);
		ret = pindma_edu_xfer(edu, edu->bounce_dma, EDU_BUF_ADDR,
				      len, 0, xfers);
		if (!ret)
			ret = pindma_edu_page_xfer(edu, page, off, len, dir,
						   xfers);
	} else {
		ret = pindma_edu_page_xfer(edu, page, off, len, dir, xfers);
		if (!ret)
			ret = pindma_edu_xfer(edu, EDU_BUF_ADDR,
					      edu->bounce_dma, len,
					      EDU_DMA_TO_RAM, xfers);
		if (!ret)
			memcpy(buf, edu->bounce, len);
	}
unlock:
	mutex_unlock(&pindma_edu_lock);
	return ret;
}

/* Bytes the width probe reads; the page's second half receives them. */
#define PINDMA_EDU_PROBE_LEN	64

/*
 * QEMU's edu drives the address bits its dma_mask property gives it (28
 * unless started with more) and masks every DMA address to them: driven with
 * a wider dma_bits it would read and write RAM other than the pages mapped.
 * No register tells its width, so it is asked, with reads of RAM only: a
 * random pattern is put in a coherent page taken under a 24-bit coherent mask
 * (so at a bus address @b below 16 MiB that nothing bounces, whatever swiotlb
 * does), and the device reads @b | BIT(bit), for the highest bit below both
 * dma_bits and the top of RAM at which that address is RAM. A device that
 * drops the bit reads the pattern back; one that drives it reads other RAM.
 * What it read is written into the second half of the same page.
 *
 * The alias read is of RAM the DMA API never mapped for the device: fine for
 * QEMU's edu with no IOMMU, the only device this driver binds; behind an
 * IOMMU it would fault. When no alias can be asked, nothing beyond the 24
 * bits the page proved is trusted: the probe fails, saying so.
 */
static int pindma_edu_check_width(struct pindma_edu *edu)
{
	struct device *dev = &edu->pdev->dev;
	u64 limit = min(dma_get_mask(dev), dma_get_required_mask(dev));
	u64 coherent = dev->coherent_dma_mask;
	const unsigned int got = PAGE_SIZE / 2;
	dma_addr_t b, alias = 0;
	int bit, i, ret;
	u8 *p;

	ret = dma_set_coherent_mask(dev, DMA_BIT_MASK(24));
	if (ret)
		return ret;
	p = dma_alloc_coherent(dev, PAGE_SIZE, &b, GFP_KERNEL);
	ret = dma_set_coherent_mask(dev, coherent);
	if (!p)
		return -ENOMEM;
	if (ret)
		goto free;
	get_random_bytes(p, PINDMA_EDU_PROBE_LEN);
	memset(p + got, 0, PINDMA_EDU_PROBE_LEN);

	/* The alias drops back to the page with any bit above 16 MiB. */
	bit = -1;
	for (i = fls64(limit) - 1; b + PAGE_SIZE <= SZ_16M && i >= 24; i--) {
		if (page_is_ram(PHYS_PFN(dma_to_phys(dev, b | BIT_ULL(i))))) {
			bit = i;
			break;
		}
	}
	if (bit < 0) {
		if (dma_bits > 24) {
			dev_err(dev,
				"dma_bits=%u: the device's width cannot be asked here (no RAM at an alias of %pad): load pindma with dma_bits=24\n",
				dma_bits, &b);
			ret = -EINVAL;
		}
		goto free;
	}
	alias = b | BIT_ULL(bit);
	mutex_lock(&pindma_edu_lock);
	ret = pindma_edu_xfer(edu, alias, EDU_BUF_ADDR, PINDMA_EDU_PROBE_LEN, 0,
			      NULL);
	if (!ret)
		ret = pindma_edu_xfer(edu, EDU_BUF_ADDR, b + got, PINDMA_EDU_PROBE_LEN,
				      EDU_DMA_TO_RAM, NULL);
	mutex_unlock(&pindma_edu_lock);
	if (ret)
		goto free;
	if (!memcmp(p, p + got, PINDMA_EDU_PROBE_LEN)) {
		dev_err(dev,
			"dma_bits=%u: the device drops address bit %d (it read %pad as %pad): start it with a wider dma_mask or load pindma with dma_bits=%d or fewer\n",
			dma_bits, bit, &alias, &b, bit);
		ret = -EINVAL;
	} else {
		dev_info(dev, "dma_bits=%u: the device drives address bit %d\n",
			 dma_bits, bit);
	}
free:
	dma_free_coherent(dev, PAGE_SIZE, p, b);
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
#ifdef PINDMA_PCIM_IOMAP_REGION	/* 6.12, see Kbuild */
	edu->regs = pcim_iomap_region(pdev, 0, KBUILD_MODNAME);
	if (IS_ERR(edu->regs))
		return PTR_ERR(edu->regs);
#else
	ret = pcim_iomap_regions(pdev, BIT(0), KBUILD_MODNAME);
	if (ret)
		return ret;
	edu->regs = pcim_iomap_table(pdev)[0];
#endif

	if (dma_bits < 12 || dma_bits > 64) {
		dev_err(dev, "dma_bits=%u: must be 12 to 64\n", dma_bits);
		return -EINVAL;
	}
	/* Its reach and its width are judged by bus addresses, untranslated. */
	if (device_iommu_mapped(dev)) {
		dev_err(dev, "behind an IOMMU, which pindma does not support\n");
		return -ENODEV;
	}
	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(dma_bits));
	if (ret)
		return ret;
	init_completion(&edu->done);
	/* Freed with the device (pcim_enable_device() made its MSI managed). */
	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI);
	if (ret < 0) {
		dev_err(dev, "no MSI vector: %d\n", ret);
		return ret;
	}
	ret = devm_request_irq(dev, pci_irq_vector(pdev, 0), pindma_edu_irq, 0,
			       KBUILD_MODNAME, edu);
	if (ret)
		return ret;
	pci_set_master(pdev);
	ret = pindma_edu_check_width(edu);
	if (ret)
		return ret;
	edu->bounce = dmam_alloc_coherent(dev, PAGE_SIZE, &edu->bounce_dma,
					  GFP_KERNEL);
	if (!edu->bounce)
		return -ENOMEM;
	edu->swiotlb_reaches = pindma_edu_swiotlb_reaches(dev);
	pci_set_drvdata(pdev, edu);

	dev_info(dev, "edu id %#010x, swiotlb %s\n",
		 readl(edu->regs + EDU_REG_ID),
		 edu->swiotlb_reaches ? "bounces within reach" :
		 "cannot bounce for it");

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
