// The colour ops of timm's RandAugment with Pillow's arithmetic (ImageOps, ImageEnhance, Image.blend,
// ImageFilter.SMOOTH, Pillow 13), on uint8 images in place, so that each output byte equals Pillow's.
#ifndef NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_PIL_COLOUR_OPS_H_
#define NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_PIL_COLOUR_OPS_H_

#include "worker/trainer/data/image.h"

namespace nmsparse::pil {

// ImageOps.autocontrast(cutoff=0): each channel's [lowest, highest] value stretched to [0, 255].
void AutoContrast(Image& image);
// ImageOps.equalize: each channel's histogram flattened by Pillow's integer steps.
void Equalize(Image& image);
// ImageOps.invert.
void Invert(Image& image);
// ImageOps.posterize: keeps the `bits` high bits. bits = 0 keeps none (black), as Pillow < 10 did; Pillow 10+
// raises there, which timm reaches at PosterizeIncreasing m >= 10 (see rand_augment_ops.h).
void Posterize(Image& image, int bits);
// ImageOps.solarize: values >= threshold inverted.
void Solarize(Image& image, int threshold);
// timm's solarize_add: values < threshold raised by `add`, capped at 255.
void SolarizeAdd(Image& image, int add, int threshold = 128);
// ImageEnhance.*(image).enhance(factor): Image.blend(degenerate, image, factor) where the degenerate is the
// grey (L) image (Color), a flat image at the L mean (Contrast), black (Brightness), or SMOOTH with its
// border kept (Sharpness).
void Color(Image& image, double factor);
void Contrast(Image& image, double factor);
void Brightness(Image& image, double factor);
void Sharpness(Image& image, double factor);

}  // namespace nmsparse::pil

#endif  // NMSPARSE_WORKER_TRAINER_DATA_RANDAUGMENT_PIL_COLOUR_OPS_H_
