#!/usr/bin/env python3
"""Reads report/testdata/hparams_run.tfevents (the event file report/tfevents_test pins to what
`nmctl export --format tensorboard` writes for one run) with the tensorboard package's own event reader and
HParams plugin parsers, and checks what TensorBoard's HParams tab would list: the experiment's
hyperparameters and metrics, the run's hyperparameter values, its final metric values and its status.

Usage: tools/check_tensorboard_hparams.py [EVENTS_FILE]   (in a Python with tensorboard installed, e.g.
tools/check_timm_goldens.sh's venv). Exits non-zero naming the first difference.
"""
import os
import sys

from tensorboard.backend.event_processing import event_accumulator
from tensorboard.plugins.hparams import api_pb2, metadata


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'report', 'testdata', 'hparams_run.tfevents')
    acc = event_accumulator.EventAccumulator(path, size_guidance={event_accumulator.TENSORS: 0})
    acc.Reload()
    content = acc.PluginTagToContent(metadata.PLUGIN_NAME)
    want_tags = {metadata.EXPERIMENT_TAG, metadata.SESSION_START_INFO_TAG, metadata.SESSION_END_INFO_TAG}
    check(set(content) == want_tags, f'hparams tags {sorted(content)}, expected {sorted(want_tags)}')

    experiment = metadata.parse_experiment_plugin_data(content[metadata.EXPERIMENT_TAG])
    infos = {i.name: i.type for i in experiment.hparam_infos}
    check(infos == {'optimizer.lr': api_pb2.DATA_TYPE_FLOAT64, 'recipe': api_pb2.DATA_TYPE_STRING,
                    'sparsity.m_sparsity': api_pb2.DATA_TYPE_FLOAT64}, f'hparam infos {infos}')
    metrics = [m.name.tag for m in experiment.metric_infos]
    check(metrics == ['final/loss', 'final/top1'], f'metric infos {metrics}')

    start = metadata.parse_session_start_info_plugin_data(content[metadata.SESSION_START_INFO_TAG])
    hparams = {k: v.WhichOneof('kind') + '=' + str(getattr(v, v.WhichOneof('kind')))
               for k, v in start.hparams.items()}
    check(hparams == {'optimizer.lr': 'number_value=0.002', 'recipe': 'string_value=srste',
                      'sparsity.m_sparsity': 'number_value=8.0'}, f'session hparams {hparams}')
    check(start.start_time_secs == 1700000002.0, f'start time {start.start_time_secs}')

    end = metadata.parse_session_end_info_plugin_data(content[metadata.SESSION_END_INFO_TAG])
    check(end.status == api_pb2.STATUS_SUCCESS, f'status {api_pb2.Status.Name(end.status)}')

    # The metric values the HParams tab shows: the last value of each metric's scalar tag in the run.
    scalars = {tag: acc.Scalars(tag)[-1].value for tag in acc.Tags()['scalars']}
    check(scalars == {'final/loss': 0.5, 'final/top1': 0.8125}, f'scalars {scalars}')
    print(f'{path}: TensorBoard reads experiment {infos}, metrics {metrics}, session {hparams}, '
          f'status {api_pb2.Status.Name(end.status)}, final {scalars}')


def check(ok, what):
    if not ok:
        sys.exit(f'check_tensorboard_hparams: unexpected {what}')


if __name__ == '__main__':
    main()
