// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-fr: persistent memory as a first responder for a block device.
 *
 * Bootstrap stage: the table line is parsed in full and the PM device must be
 * DAX-capable, but I/O passes straight through to the origin.
 *
 * Table line: <origin dev> <pm dev> [<#opt args> <opt args>...]
 */
#include <linux/module.h>
#include <linux/device-mapper.h>
#include <linux/dax.h>

#define DM_MSG_PREFIX "fr"

struct fr_c {
	struct dm_dev *origin;
	struct dm_dev *pm;
};

static int fr_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	static const struct dm_arg _args[] = {
		{0, 16, "Invalid number of feature arguments"},
	};
	struct dm_arg_set as;
	unsigned int nr_opt;
	struct fr_c *fc;
	int r;

	as.argc = argc;
	as.argv = argv;

	if (argc < 2) {
		ti->error = "Requires <origin dev> <pm dev> [<#opt args> <opt args>...]";
		return -EINVAL;
	}

	fc = kzalloc(sizeof(*fc), GFP_KERNEL);
	if (!fc) {
		ti->error = "Cannot allocate target context";
		return -ENOMEM;
	}

	r = dm_get_device(ti, dm_shift_arg(&as), dm_table_get_mode(ti->table),
			  &fc->origin);
	if (r) {
		ti->error = "Origin device lookup failed";
		goto bad_origin;
	}
	r = dm_get_device(ti, dm_shift_arg(&as), dm_table_get_mode(ti->table),
			  &fc->pm);
	if (r) {
		ti->error = "PM device lookup failed";
		goto bad_pm;
	}
	if (!fc->pm->dax_dev) {
		ti->error = "PM device does not support DAX";
		r = -EOPNOTSUPP;
		goto bad;
	}
	if (as.argc) {
		r = dm_read_arg_group(_args, &as, &nr_opt, &ti->error);
		if (r)
			goto bad;
		if (nr_opt) {
			ti->error = "Optional arguments are not supported yet";
			r = -EINVAL;
			goto bad;
		}
		if (as.argc) {
			ti->error = "Trailing arguments after the optional group";
			r = -EINVAL;
			goto bad;
		}
	}

	ti->private = fc;
	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	return 0;

bad:
	dm_put_device(ti, fc->pm);
bad_pm:
	dm_put_device(ti, fc->origin);
bad_origin:
	kfree(fc);
	return r;
}

static void fr_dtr(struct dm_target *ti)
{
	struct fr_c *fc = ti->private;

	dm_put_device(ti, fc->pm);
	dm_put_device(ti, fc->origin);
	kfree(fc);
}

static int fr_map(struct dm_target *ti, struct bio *bio)
{
	struct fr_c *fc = ti->private;

	bio_set_dev(bio, fc->origin->bdev);
	bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	return DM_MAPIO_REMAPPED;
}

static void fr_status(struct dm_target *ti, status_type_t type,
		      unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct fr_c *fc = ti->private;
	unsigned int sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("passthrough");
		break;
	case STATUSTYPE_TABLE:
		DMEMIT("%s %s", fc->origin->name, fc->pm->name);
		break;
	case STATUSTYPE_IMA:
		*result = '\0';
		break;
	}
}

static int fr_iterate_devices(struct dm_target *ti,
			      iterate_devices_callout_fn fn, void *data)
{
	struct fr_c *fc = ti->private;

	return fn(ti, fc->origin, 0, ti->len, data);
}

static struct target_type fr_target = {
	.name = "fr",
	.version = {0, 1, 0},
	.module = THIS_MODULE,
	.ctr = fr_ctr,
	.dtr = fr_dtr,
	.map = fr_map,
	.status = fr_status,
	.iterate_devices = fr_iterate_devices,
};

static int __init dm_fr_init(void)
{
	return dm_register_target(&fr_target);
}

static void __exit dm_fr_exit(void)
{
	dm_unregister_target(&fr_target);
}

module_init(dm_fr_init);
module_exit(dm_fr_exit);

MODULE_DESCRIPTION(DM_NAME " persistent-memory first responder target");
MODULE_LICENSE("GPL");
