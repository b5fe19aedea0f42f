// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * reconic_mm: the card memory of an ernic with layout=reconic
 * (docs/boards.md) as the character device /dev/reconic-mm.
 *
 * On a RecoNIC board, RecoNIC's QDMA driver provides /dev/reconic-mm: its
 * user-space library seeks to an offset of the card's DDR and reads or
 * writes there (lib/memory_api.c). Here the card memory is BAR4 of the
 * function, and this driver copies through it. Like the QDMA driver, it
 * enables the function and its bus mastering; it claims only BAR4, so the
 * library still maps BAR2 through sysfs (resource2). One card per guest,
 * as the device node's name is fixed.
 */

#include <linux/fs.h>
#include <linux/io.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "hw/rdma/ernic_regs.h"

#define RN_MM_CHUNK	PAGE_SIZE

struct rn_mm {
	struct pci_dev *pdev;
	void __iomem *card;
	resource_size_t size;
	struct miscdevice misc;
};

static atomic_t rn_mm_taken = ATOMIC_INIT(0);

static struct rn_mm *rn_mm_of(struct file *file)
{
	return container_of(file->private_data, struct rn_mm, misc);
}

static loff_t rn_mm_llseek(struct file *file, loff_t off, int whence)
{
	return fixed_size_llseek(file, off, whence, rn_mm_of(file)->size);
}

/* The bytes of [*pos, *pos + len) that lie in card memory. */
static size_t rn_mm_span(struct rn_mm *mm, size_t len, loff_t pos)
{
	if (pos < 0 || pos >= mm->size)
		return 0;
	return min_t(u64, len, mm->size - pos);
}

static ssize_t rn_mm_read(struct file *file, char __user *buf, size_t len,
			  loff_t *pos)
{
	struct rn_mm *mm = rn_mm_of(file);
	size_t n = rn_mm_span(mm, len, *pos), done = 0;
	void *bounce;

	bounce = kmalloc(RN_MM_CHUNK, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	while (done < n) {
		size_t c = min_t(size_t, n - done, RN_MM_CHUNK);

		memcpy_fromio(bounce, mm->card + *pos + done, c);
		if (copy_to_user(buf + done, bounce, c))
			break;
		done += c;
		cond_resched();
	}
	kfree(bounce);
	*pos += done;
	return done || !n ? done : -EFAULT;
}

static ssize_t rn_mm_write(struct file *file, const char __user *buf,
			   size_t len, loff_t *pos)
{
	struct rn_mm *mm = rn_mm_of(file);
	size_t n = rn_mm_span(mm, len, *pos), done = 0;
	void *bounce;

	if (len && !n)
		return -ENOSPC;
	bounce = kmalloc(RN_MM_CHUNK, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	while (done < n) {
		size_t c = min_t(size_t, n - done, RN_MM_CHUNK);

		if (copy_from_user(bounce, buf + done, c))
			break;
		memcpy_toio(mm->card + *pos + done, bounce, c);
		done += c;
		cond_resched();
	}
	kfree(bounce);
	*pos += done;
	return done || !n ? done : -EFAULT;
}

static const struct file_operations rn_mm_fops = {
	.owner = THIS_MODULE,
	.llseek = rn_mm_llseek,
	.read = rn_mm_read,
	.write = rn_mm_write,
};

static int rn_mm_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct rn_mm *mm;
	int ret;

	if (atomic_xchg(&rn_mm_taken, 1)) {
		dev_err(&pdev->dev, "reconic-mm serves one card; this one is left alone\n");
		return -EBUSY;
	}
	ret = -ENOMEM;
	mm = devm_kzalloc(&pdev->dev, sizeof(*mm), GFP_KERNEL);
	if (!mm)
		goto out_free;
	ret = pcim_enable_device(pdev);
	if (ret)
		goto out_free;
	ret = pcim_iomap_regions(pdev, BIT(ERNIC_RN_BAR_CARD), "reconic-mm");
	if (ret) {
		dev_err(&pdev->dev, "cannot map card memory (BAR%d): %d\n",
			ERNIC_RN_BAR_CARD, ret);
		goto out_free;
	}
	pci_set_master(pdev);
	mm->pdev = pdev;
	mm->card = pcim_iomap_table(pdev)[ERNIC_RN_BAR_CARD];
	mm->size = pci_resource_len(pdev, ERNIC_RN_BAR_CARD);
	mm->misc.minor = MISC_DYNAMIC_MINOR;
	mm->misc.name = "reconic-mm";
	mm->misc.fops = &rn_mm_fops;
	mm->misc.parent = &pdev->dev;
	ret = misc_register(&mm->misc);
	if (ret)
		goto out_free;
	pci_set_drvdata(pdev, mm);
	dev_info(&pdev->dev, "/dev/reconic-mm: %llu MiB of card memory\n",
		 (unsigned long long)mm->size >> 20);
	return 0;

out_free:
	atomic_set(&rn_mm_taken, 0);
	return ret;
}

static void rn_mm_remove(struct pci_dev *pdev)
{
	struct rn_mm *mm = pci_get_drvdata(pdev);

	misc_deregister(&mm->misc);
	atomic_set(&rn_mm_taken, 0);
}

static const struct pci_device_id rn_mm_ids[] = {
	{ PCI_DEVICE(ERNIC_PCI_VENDOR_ID, ERNIC_RN_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, rn_mm_ids);

static struct pci_driver rn_mm_driver = {
	.name = "reconic_mm",
	.id_table = rn_mm_ids,
	.probe = rn_mm_probe,
	.remove = rn_mm_remove,
};
module_pci_driver(rn_mm_driver);

MODULE_DESCRIPTION("Card memory of an ernic with RecoNIC's layout as /dev/reconic-mm");
MODULE_LICENSE("GPL");
