# bench/results/btrfs-cpu: a profile of Btrfs varmail on dm-fr, run as
#   tests/vm/boot --pm memmap:512 --origin bench:8G --memory 3G --env FR_KO=<dm-fr.ko> \
#     --env BENCH_VARMAIL=<varmail built from bench/tools/varmail.c> -- "bash prof.sh"
# (FR_STATE is the boot's --state folder; perf is linux-perf's, installed by hand:
# not one of the project's dependencies, as this is a one-off diagnosis).
set -x
modprobe dm-mod; modprobe nd_e820; modprobe nd_pmem; modprobe btrfs
for d in $(modinfo -F depends "$FR_KO" | tr , ' '); do modprobe "$d"; done
insmod "$FR_KO"
udevadm settle; sleep 1
O=/dev/$(for b in /sys/block/vd*; do [ "$(cat $b/serial)" = bench ] && echo ${b##*/}; done)
D="dmsetup --noudevsync"
$D create pm32 --table "0 65536 linear /dev/pmem0 0"
$D create orig --table "0 1048576 linear $O 4194304"
dd if=/dev/zero of=/dev/pmem0 bs=1M count=64 oflag=direct status=none
$D create bfr --table "0 1048576 fr /dev/mapper/orig /dev/mapper/pm32 1 fresh"
dev=/dev/$($D info -c --noheadings -o blkdevname bfr | tr -d ' ')
echo 0 > /sys/block/${dev##*/}/queue/rotational
mkfs.btrfs -q -f $dev && mkdir -p /tmp/mnt && mount $dev /tmp/mnt && mkdir -p /tmp/mnt/d/varmail
cd $FR_STATE
perf record -a -g -o /tmp/perf.data -- $BENCH_VARMAIL run /tmp/mnt/d/varmail $FR_STATE/vm.state 10 2 200 0 12 > $FR_STATE/vm.json 2>$FR_STATE/vm.err
cat $FR_STATE/vm.json | head -c 300; echo
perf report -i /tmp/perf.data --no-children --sort sym --stdio -g none 2>/dev/null | grep -v "^#" | grep "%" | head -45 > $FR_STATE/top.txt
perf report -i /tmp/perf.data --no-children --sort dso --stdio 2>/dev/null | grep "%" | head -15 > $FR_STATE/dso.txt
dmsetup status bfr
umount /tmp/mnt
