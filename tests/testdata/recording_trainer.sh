#!/usr/bin/env bash
# A stand-in for nmtrain, for the device test only: records the argv and rank environment it was started with
# in <--out>/rank-<RANK>.txt and, as rank 0, prints the final metric line nmtrain would, naming the device it
# would open by the contract (contract/trainer_flags.h). $FAKE_REPORTED_DEVICE overrides that
# device, to play a trainer that ignored --device.
out="" device=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --out) out=${args[i + 1]} ;;
    --device) device=${args[i + 1]} ;;
  esac
done
mkdir -p "$out"
{
  echo "argv=$*"
  echo "RANK=$RANK"
  echo "LOCAL_RANK=$LOCAL_RANK"
  echo "WORLD_SIZE=$WORLD_SIZE"
  echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>}"
  echo "CUDA_DEVICE_ORDER=${CUDA_DEVICE_ORDER-<unset>}"
  echo "MASTER_PORT=$MASTER_PORT"
} >"$out/rank-$RANK.txt"
if [[ "$device" == cuda ]]; then
  IFS=, read -r -a visible <<<"$CUDA_VISIBLE_DEVICES"
  reported="cuda:$LOCAL_RANK (GPU ${visible[$LOCAL_RANK]}) NVIDIA H100 80GB HBM3"
else
  reported=cpu
fi
reported=${FAKE_REPORTED_DEVICE:-$reported}
if [[ "$RANK" == 0 ]]; then
  echo "{\"kind\":\"final\",\"epoch\":0,\"step\":1,\"top1\":0.5,\"device\":\"$reported\",\"devices\":\"$reported\"}"
fi
