# Sourced by the H200-only probes (from the repository root): names the GPU and ends the calling script at once unless it
# is an H200 (the bars are the H200's, and the kind nvidia-h200 mostly lends an H100).
name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
case "$name" in *H200*) ;; *) echo "device: $name: not an H200, nothing run"; exit 0 ;; esac
