#!/usr/bin/env bash
# Stages one part of the packed FlashAttention-4 (scripts/pack_fa4.sh) on the device machine.
# One device call carries at most 64 MiB, so the parts come in consecutive calls while the
# machine stays warm; each call runs this script on the part it carried:
#
#     bash scripts/device_fa4_stage.sh .peers/fa4.tar.xz.part-1of2
#
# The part is copied to $FA4_PARTS (default /tmp/fa4_parts). Once all N parts of its name are
# there, they are concatenated in order and unpacked into $FA4_SITE (default /tmp/fa4_site),
# which gets the marker file .fa4_complete; the parts are then deleted. Idempotent: a part
# already stored is not copied again, and with the marker present nothing is done.
# scripts/device_full.sh stages whatever parts it finds in .peers and runs the FA4 peer only
# when the marker is there. A fresh machine starts bare: every part has to come again.
#
# Exit status: 0 when the part was stored or the site is complete, 1 when the parts did not
# form one archive (they are then all deleted: carry them again), 2 for a missing or misnamed part.
set -euo pipefail
SITE=${FA4_SITE:-/tmp/fa4_site}
PARTS=${FA4_PARTS:-/tmp/fa4_parts}
MARKER=$SITE/.fa4_complete
part=${1:?usage: device_fa4_stage.sh .peers/fa4.tar.xz.part-KofN}
base=$(basename "$part")

if [ -f "$MARKER" ]; then
  echo "fa4 stage: $SITE is complete already ($(cat "$MARKER")); $base not needed"
  exit 0
fi
[ -f "$part" ] || { echo "fa4 stage: $part not found (name it in the call's carry list)"; exit 2; }
[[ $base =~ ^fa4\.tar\.xz\.part-0*([1-9][0-9]*)of([1-9][0-9]*)$ ]] \
  || { echo "fa4 stage: $base is not named fa4.tar.xz.part-KofN (scripts/pack_fa4.sh names them)"; exit 2; }
k=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}

mkdir -p "$PARTS"
# A part of another packing (another count) cannot belong to this one.
for p in "$PARTS"/fa4.tar.xz.part-*; do
  [ -e "$p" ] || continue
  [[ $p == *of$n ]] || { echo "fa4 stage: dropping $(basename "$p") (another packing)"; rm -f "$p"; }
done
if ! cmp -s "$part" "$PARTS/$base"; then
  cp "$part" "$PARTS/.$base.partial" && mv "$PARTS/.$base.partial" "$PARTS/$base"
fi
have=$(find "$PARTS" -maxdepth 1 -name "fa4.tar.xz.part-*of$n" | wc -l)
if [ "$have" -lt "$n" ]; then
  echo "fa4 stage: part $k of $n stored in $PARTS ($have of $n there); the others must follow while the machine is warm"
  exit 0
fi

# Every part is here: unpack into a fresh folder, then move it into place with the marker.
t0=$(date +%s)
rm -rf "$SITE.partial" && mkdir -p "$SITE.partial"
# The names sort in part order (pack_fa4.sh pads K to the width of N).
if cat "$PARTS"/fa4.tar.xz.part-*of"$n" | tar -C "$SITE.partial" -xJf -; then
  rm -rf "$SITE" && mv "$SITE.partial" "$SITE"
  echo "$n parts, unpacked $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$MARKER"
  rm -rf "$PARTS"
  echo "fa4 stage: complete: $SITE ($(du -sh "$SITE" | cut -f1), $(( $(date +%s) - t0 )) s to unpack)"
else
  rm -rf "$SITE.partial" "$PARTS"
  echo "fa4 stage: the $n parts do not form one archive (parts of different packings?); all deleted, carry them again"
  exit 1
fi
