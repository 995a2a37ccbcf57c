# Shell helpers shared by the benchmark scripts (sourced, not run).

# The value of KEY in nmtrain's epoch line, read from nmtrain's stdout on stdin.
epoch_field() { grep '"kind":"epoch"' | grep -o "\"$1\":[0-9.e+-]*" | cut -d: -f2; }

# The median of the numbers on stdin, one per line.
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
