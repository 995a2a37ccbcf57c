#!/usr/bin/env python3
"""A page in headless Chromium that a test drives: the DevTools protocol over --remote-debugging-pipe (fds 3
and 4, messages of JSON ended by NUL), so that a test can click and then read the page's state, which
--dump-dom cannot. Standard library only.

    with Page(chromium, profile_dir) as page:
        page.open('http://127.0.0.1:8080/sweeps/1')
        page.wait('document.querySelectorAll("#runs tbody tr").length == 3')
        rows = page.eval('[...document.querySelectorAll("#runs tbody tr")].map(r => r.textContent)')
"""
import json
import os
import subprocess
import time


class PageError(Exception):
    pass


class Page:
    def __init__(self, chromium, profile_dir, width=1400, height=1000):
        to_chromium_r, self._to_chromium = os.pipe()
        self._from_chromium, from_chromium_w = os.pipe()

        def child_fds():  # Chromium reads commands from fd 3 and writes answers to fd 4, both inherited.
            r, w = os.dup(to_chromium_r), os.dup(from_chromium_w)  # Above 4, whichever the pipes got.
            os.dup2(r, 3)
            os.dup2(w, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self._proc = subprocess.Popen(
            [chromium, '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe',
             f'--user-data-dir={profile_dir}', f'--window-size={width},{height}', 'about:blank'],
            preexec_fn=child_fds, close_fds=False, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(profile_dir + '.log'), 'ab'))
        os.close(to_chromium_r)
        os.close(from_chromium_w)
        self._next_id = 0
        self._buffer = b''
        target = self._call('Target.createTarget', {'url': 'about:blank'})['targetId']
        self._session = self._call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        self._call('Page.enable', session=True)
        self._call('Runtime.enable', session=True)
        self.console = []  # Exceptions the page threw.

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def close(self):
        try:
            self._call('Browser.close')
        except Exception:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def _read(self):
        while b'\0' not in self._buffer:
            chunk = os.read(self._from_chromium, 1 << 16)
            if not chunk:
                raise PageError('Chromium closed its pipe')
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b'\0', 1)
        return json.loads(message)

    def _call(self, method, params=None, session=False):
        self._next_id += 1
        message = {'id': self._next_id, 'method': method, 'params': params or {}}
        if session:
            message['sessionId'] = self._session
        os.write(self._to_chromium, json.dumps(message).encode() + b'\0')
        while True:
            answer = self._read()
            if answer.get('method') == 'Runtime.exceptionThrown':
                self.console.append(answer['params']['exceptionDetails'].get('exception', {}).get('description'))
            if answer.get('id') == self._next_id:
                if 'error' in answer:
                    raise PageError(f'{method}: {answer["error"]}')
                return answer['result']

    def open(self, url):
        self._call('Page.navigate', {'url': url}, session=True)
        self.wait('document.readyState === "complete"', timeout=120)

    def eval(self, expression):
        """The expression's value (a JSON value; a promise is awaited)."""
        result = self._call('Runtime.evaluate', {'expression': expression, 'awaitPromise': True,
                                                 'returnByValue': True}, session=True)
        if 'exceptionDetails' in result:
            raise PageError(f'{expression}: {result["exceptionDetails"]}')
        return result['result'].get('value')

    def wait(self, condition, timeout=120):
        """Until the page's condition holds (polled; the page's own timers and fetches run meanwhile)."""
        deadline = time.monotonic() + timeout
        while not self.eval(f'!!({condition})'):
            if time.monotonic() > deadline:
                raise PageError(f'timed out waiting for {condition}')
            time.sleep(0.05)
