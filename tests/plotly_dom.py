#!/usr/bin/env python3
"""Checks a page's DOM as headless Chromium dumped it (--dump-dom) after figures.js drew it with plotly.js.

  plotly_dom.py charts DOM ID...      each element chart-ID is a drawn plotly chart (js-plotly-plot with an
                                      SVG main-svg) with at least one point
  plotly_dom.py literal DOM TEXT...   each TEXT is shown literally in a chart's text (a legend entry, a title),
                                      and no chart holds an element that markup in a label would make
                                      (<img>, <a>, <b>'s bold tspan): user text stays text
"""
import sys
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []  # (tag, attrs) of open elements
        self.charts = {}  # chart id -> {'plotly': bool, 'main_svg': bool, 'points': int}
        self.chart_texts = []  # text shown inside <text> elements of charts
        self.injected = []
        self.in_text = 0

    VOID = {'img', 'br', 'input', 'meta', 'link', 'hr', 'source', 'area', 'base', 'col', 'embed', 'wbr'}

    def chart(self):
        for tag, attrs in reversed(self.stack):
            if attrs.get('id', '').startswith('chart-'):
                return attrs['id'][len('chart-'):]
        return None

    def handle_starttag(self, tag, attr_list):
        attrs = {k: v or '' for k, v in attr_list}
        inside = self.chart()
        if attrs.get('id', '').startswith('chart-'):
            self.charts[attrs['id'][len('chart-'):]] = {
                'plotly': 'js-plotly-plot' in attrs.get('class', ''), 'main_svg': False,
                'points': int(attrs.get('data-points', '0') or 0)}
        if inside is not None:
            if 'main-svg' in attrs.get('class', ''):
                self.charts[inside]['main_svg'] = True
            # Plotly's own mode bar has <a> buttons; a link from a label would be inside an SVG <text>.
            from_label = tag in ('img', 'script', 'iframe') or (tag == 'a' and self.in_text) or \
                'font-weight:bold' in attrs.get('style', '').replace(' ', '')
            if from_label:
                self.injected.append((inside, tag, attrs))
        if tag in ('text', 'tspan'):
            self.in_text += 1
            if self.in_text == 1 and inside is not None:
                self.chart_texts.append('')
        if tag not in self.VOID:
            self.stack.append((tag, attrs))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        if tag in ('text', 'tspan'):
            self.in_text = max(0, self.in_text - 1)

    def handle_data(self, data):
        if self.in_text and self.chart() is not None and self.chart_texts:
            self.chart_texts[-1] += data


def main():
    what, path, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
    dom = Dom()
    dom.feed(open(path, encoding='utf-8').read())
    dom.close()
    if what == 'charts':
        bad = [(i, dom.charts.get(i)) for i in wanted
               if not (dom.charts.get(i) and dom.charts[i]['plotly'] and dom.charts[i]['main_svg']
                       and dom.charts[i]['points'] > 0)]
        if bad:
            sys.exit(f'not drawn: {bad}')
    elif what == 'literal':
        missing = [t for t in wanted if not any(t in shown for shown in dom.chart_texts)]
        if missing or dom.injected:
            sys.exit(f'not shown literally: {missing}; elements from labels: {dom.injected[:5]}; '
                     f'texts: {dom.chart_texts[:40]}')
    else:
        sys.exit(f'unknown check {what}')


if __name__ == '__main__':
    main()
