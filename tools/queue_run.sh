#!/usr/bin/env bash
# The reference run split over short GPU leases (issue 49): a queue of notebook runs that goes on in the
# background between calls, each step started only if its estimate fits before a deadline, and the
# results packed into one tarball whenever asked. Run from the repository root on the GPU machine:
#   [GATE=1] bash tools/queue_run.sh start LEFT STEP...   set up, start the queue detached (setsid), return
#   bash tools/queue_run.sh wait SECONDS                  wait for the queue, then pack results into $OUT/ref49.tgz
# Needs: .whl/ (the wheels the GPU machine lacks, installed into /tmp/site), .gpu/commit (the frozen commit,
# written into every row as TOKGEN_COMMIT). The queue works in a copy of the repository under /tmp/ref, so a
# later call that re-sends the working tree does not touch it; a second queue on the same machine writes
# /tmp/ref/logs/queue and logs/deadline and starts `queue` in /tmp/ref/repo rather than `start` (which wipes it).
# Back on the workstation: extract the tarball into an empty folder and copy its data, figures, notebooks,
# solutions and slice folders over the repository's (the run's branch), then commit. The tarball holds only the
# files the queue wrote (logs/packed.txt lists them), but data/run_all.csv whole: with results of two machines,
# merge their run_all.csv files row by row (tools/merge_run_all.py), never copy one over the other.
# STEP = KIND:ARG:EST_S
#   w:NN       notebook NN and its solution on the whole GPU (runner --only NN)
#   s16:NN     notebook NN in the 16-SM slice; s8:NN in the 8-SM slice
#   q:whole    the quick run, whole GPU, into data/quick/whole; q:whole_16gb with --memory-gb 16
#   t:FILES@K  pytest FILES (joined by +) -k K (~ for spaces); @K optional
# A step starts only if now + EST fits before the deadline (logs/deadline) and the tables it reads as this
# run's (`tokgen.rows_at(..., this_run=...)`: `needs` below) already hold rows of the frozen commit; the first
# step that fails either ends the queue (later steps may depend on it). GATE=1: a failed t: step ends the queue.
# (Session 17 ran w:12 before 07 and 10 had run at the commit: its outputs said the rows were missing.)
set -u
R=/tmp/ref
# needs STEP: the tables (under data/, or slice/smN/data/ for sN:) the step reads as this run's rows
needs() { case "$1" in
  *:03) echo 02_kv_cache ;; *:07) echo 06_eos_sync_profile ;; w:12) echo 07_pipelining 10_cuda_graphs 10_kernels ;;
  w:14) echo 13_slices ;; q:*) echo 10_cuda_graphs ;;
  w:09) echo 01_naive 02_kv_cache 03_expandable_segments 04_static_cache 05_torch_compile 06_eos_sync_profile \
    07_pipelining 08_batch_sweep 10_cuda_graphs 11_sync_audit 12_speed_of_light 13_slices 14_deferred_stop \
    slice/sm{8,16}/data/0{1,2,3,4,5,6,7,8}_{naive,kv_cache,expandable_segments,static_cache,torch_compile,eos_sync_profile,pipelining,batch_sweep} ;;
  esac; }
# missing STEP COMMIT: prints the tables of `needs` with no row of COMMIT (empty: the step may start)
missing() { local dir=data t; case "$1" in s16:*) dir=slice/sm16/data ;; s8:*) dir=slice/sm8/data ;; esac
  for t in $(needs "$1"); do [[ $t == */* ]] || t=$dir/$t; [ -e "$t.csv" ] || [[ $t != slice/*/0* ]] || continue
    grep -qs ",$2" "$t.csv" || echo -n "$t.csv "; done; }
cmd=$1; shift
case "$cmd" in
start)
  LEFT=$1; shift
  rm -rf $R; mkdir -p $R/logs $R/repo
  touch $R/logs/started  # the copy below keeps the files' times: what the queue writes is newer than this
  echo $(( $(date +%s) + LEFT )) > $R/logs/deadline
  echo "${GATE:-0}" > $R/logs/gate
  [ -n "${NOPIP:-}" ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    > $R/logs/pip.log 2>&1 || { echo "pip failed"; tail $R/logs/pip.log; exit 1; }
  site=$(env -u PYTHONPATH python3 -c 'import transformers, os; print(os.path.dirname(os.path.dirname(transformers.__file__)))')
  # the packages and their dist-info (importlib.metadata must find tokenizers 0.23 before /tmp/site's 0.22,
  # or transformers' own version check fails; the runner reads the version from the dist-info)
  mkdir -p /tmp/newest && for m in transformers tokenizers; do
    for p in "$site/$m" "$site/$m"-*.dist-info; do [ -e "$p" ] && ln -sfn "$p" /tmp/newest/; done
  done
  tar cf - --exclude=./.whl --exclude=./.venv . | tar xf - -C $R/repo
  printf '%s\n' "$@" > $R/logs/queue
  (cd $R/repo && setsid nohup bash tools/queue_run.sh queue > $R/logs/queue.log 2>&1 < /dev/null &)
  sleep 2
  nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv
  PYTHONPATH=/tmp/newest:/tmp/site python3 -c 'import transformers, tokenizers; print("newest transformers", transformers.__version__, tokenizers.__version__)'
  PYTHONPATH=/tmp/site python3 -c 'import torch, transformers, triton; print(torch.__version__, transformers.__version__, triton.__version__)'
  echo "queue started: $(cat $R/logs/queue | tr '\n' ' ')"
  ;;
queue)
  cd $R/repo
  export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 TOKGEN_COMMIT=$(cat .gpu/commit)
  while read -r step; do
    [ -z "$step" ] && continue
    kind=${step%%:*}; rest=${step#*:}; est=${rest##*:}; arg=${rest%:*}
    now=$(date +%s); deadline=$(cat $R/logs/deadline)
    if [ $(( now + est )) -gt "$deadline" ]; then
      echo "$(date +%T) stop before $step: est ${est}s > left $(( deadline - now ))s"; break
    fi
    lack=$(missing "${kind}:${arg%%@*}" "$TOKGEN_COMMIT")
    if [ -n "$lack" ]; then echo "$(date +%T) stop before $step: no row of $TOKGEN_COMMIT in $lack"; break; fi
    log=$R/logs/$(echo "${kind}_${arg}" | tr -c 'A-Za-z0-9_.\n-' '_').log
    echo "$(date +%T) start $step"
    t0=$(date +%s)
    case "$kind" in
      w) python3 -m tokgen_tools.runner --only "$arg" --no-progress --newest-transformers /tmp/newest > "$log" 2>&1 ;;
      s16|s8) python3 -m tokgen_tools.runner --slice "${kind#s}" --only "$arg" --no-progress > "$log" 2>&1 ;;
      q) if [ "$arg" = whole_16gb ]; then extra=(--memory-gb 16); else extra=(); fi
         # the quick run refuses a folder of the committed results: it writes elsewhere, then the copy replaces them
         rm -rf "/tmp/quick/$arg" && python3 -m tokgen_tools.quick --out "/tmp/quick/$arg" "${extra[@]}" > "$log" 2>&1 \
           && rm -rf "data/quick/$arg" && mkdir -p data/quick && cp -a "/tmp/quick/$arg" "data/quick/$arg" ;;
      t) files=${arg%%@*}; k=""; [[ "$arg" == *@* ]] && k=${arg#*@}
         kargs=(); [ -n "$k" ] && kargs=(-k "${k//\~/ }")
         python3 -m pytest -q -rs -p no:cacheprovider ${files//+/ } "${kargs[@]}" > "$log" 2>&1 ;;
      *) echo "unknown step $step" > "$log"; false ;;
    esac
    rc=$?
    t1=$(date +%s)
    printf '%s\t%s\t%s\t%s\n' "$step" "$rc" "$(( t1 - t0 ))" "$(date +%T)" >> $R/logs/steps.tsv
    echo "$(date +%T) end $step rc=$rc $(( t1 - t0 ))s"; tail -n 4 "$log"
    if [ "$kind" = t ] && [ "$rc" != 0 ] && [ "$(cat $R/logs/gate)" = 1 ]; then echo "gate failed: queue ends"; break; fi
  done < $R/logs/queue
  echo "queue: finished $(date +%T)"
  touch $R/logs/finished
  ;;
wait)
  N=$1; t0=$(date +%s)
  while [ ! -e $R/logs/finished ] && [ $(( $(date +%s) - t0 )) -lt "$N" ]; do sleep 5; done
  cd $R/repo
  nvidia-smi --query-gpu=name,uuid --format=csv,noheader
  cp -f build/*.log $R/logs/ 2>/dev/null
  # only what the queue wrote (newer than logs/started): a tarball of every result folder passed the size limit on
  # what comes back from $OUT (17 MB did not come back, 13 MB did; session 10)
  find data figures notebooks solutions slice $( [ -d build/failed ] && echo build/failed ) -type f \
    -newer $R/logs/started > $R/logs/packed.txt
  tar czf $OUT/ref49.tgz -T $R/logs/packed.txt -C $R logs
  ls -la $OUT
  echo "--- steps"; cat $R/logs/steps.tsv 2>/dev/null
  echo "--- queue.log"; tail -n 40 $R/logs/queue.log
  [ -e $R/logs/finished ] && echo "queue: finished (packed)" || echo "queue: running; left $(( $(cat $R/logs/deadline) - $(date +%s) ))s"
  ;;
esac
