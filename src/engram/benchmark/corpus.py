"""A generated bilingual corpus of short personal facts, with one question per fact.

Deterministic for a seed: user ``i`` always gets the same facts, so engram and
every peer index the same texts and answer the same queries. Facts are templated
from varied vocabularies (English and Chinese, about 60/40), short like the
memories an agent keeps ("Maria's sister moved to Lyon in 2019").
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

NAMES = ("Maria", "Ahmed", "Chen", "Olga", "Kenji", "Lucia", "Tom", "Priya", "Noah", "Fatima", "Ivan", "Sofia",
         "Mateo", "Aisha", "Lukas", "Mei", "Omar", "Elena", "Jonas", "Yara", "Diego", "Hana", "Pierre", "Zoe")
RELATIVES = ("sister", "brother", "mother", "father", "cousin", "aunt", "uncle", "daughter", "son", "grandmother",
             "best friend", "manager", "neighbour", "colleague", "partner", "roommate")
CITIES = ("Lyon", "Berlin", "Osaka", "Toronto", "Lisbon", "Nairobi", "Austin", "Krakow", "Seoul", "Dublin",
          "Porto", "Hanoi", "Zurich", "Denver", "Milan", "Cairo", "Oslo", "Perth", "Quito", "Bristol")
FOODS = ("sushi", "ramen", "tacos", "falafel", "dumplings", "risotto", "curry", "paella", "pho", "lasagna",
         "bagels", "kimchi", "pierogi", "croissants", "goulash", "tofu stir-fry", "dark chocolate", "mango sorbet")
HOBBIES = ("rock climbing", "watercolor painting", "chess", "birdwatching", "pottery", "salsa dancing",
           "trail running", "knitting", "astronomy", "sourdough baking", "woodworking", "scuba diving",
           "calligraphy", "bouldering", "origami", "gardening")
JOBS = ("nurse", "data engineer", "architect", "pharmacist", "teacher", "pilot", "lawyer", "chef", "translator",
        "electrician", "biologist", "accountant", "journalist", "dentist", "product designer", "firefighter")
PETS = ("a beagle", "two cats", "a parrot", "a rabbit", "a goldfish", "a husky", "a tortoise", "a hamster")
INSTRUMENTS = ("piano", "violin", "guitar", "cello", "drums", "flute", "saxophone", "ukulele")
LANGS = ("Spanish", "Japanese", "German", "Arabic", "Portuguese", "Korean", "Italian", "Swahili", "Polish")
ALLERGIES = ("peanuts", "shellfish", "gluten", "penicillin", "cats", "pollen", "lactose", "eggs")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
TOOLS = ("VS Code", "Vim", "Excel", "Figma", "Notion", "Jira", "Emacs", "PyCharm", "Slack", "Obsidian")
PROJECTS = ("Atlas", "Nimbus", "Orion", "Falcon", "Juniper", "Helix", "Quartz", "Pioneer", "Aurora", "Beacon")

ZH_NAMES = ("小王", "李娜", "张伟", "刘洋", "陈静", "杨帆", "赵磊", "黄敏", "周杰", "吴婷", "徐明", "孙丽")
ZH_RELATIVES = ("妹妹", "哥哥", "妈妈", "爸爸", "表姐", "舅舅", "女儿", "儿子", "奶奶", "同事", "室友", "老板")
ZH_CITIES = ("北京", "上海", "成都", "杭州", "西安", "深圳", "南京", "武汉", "厦门", "青岛", "昆明", "重庆")
ZH_FOODS = ("火锅", "饺子", "小笼包", "烤鸭", "麻辣烫", "米线", "煎饼", "酸菜鱼", "豆腐脑", "红烧肉", "凉皮", "粥")
ZH_HOBBIES = ("书法", "爬山", "下围棋", "弹古筝", "跑马拉松", "摄影", "钓鱼", "打乒乓球", "养花", "唱京剧")
ZH_JOBS = ("护士", "程序员", "老师", "医生", "律师", "会计", "厨师", "记者", "设计师", "工程师")
ZH_PETS = ("一只猫", "两只狗", "一只鹦鹉", "一只兔子", "几条金鱼", "一只乌龟")
ZH_DRINKS = ("绿茶", "乌龙茶", "咖啡", "豆浆", "奶茶", "菊花茶", "普洱茶")

# (fact template, question template); {n}=person, {r}=relative, slots from the lists above
EN_TEMPLATES = (
    ("{n}'s {r} moved to {city} in {year}.", "Where did {n}'s {r} move?"),
    ("{n} works as a {job} at a hospital in {city}.", "What is {n}'s job?"),
    ("{n} is allergic to {allergy} and carries medicine.", "What is {n} allergic to?"),
    ("{n} loves {food}, especially on {day} evenings.", "What food does {n} love?"),
    ("{n} took up {hobby} in {year} after visiting {city}.", "When did {n} start {hobby}?"),
    ("{n}'s {r} has {pet} named after a {lang} poet.", "What pets does {n}'s {r} have?"),
    ("{n} has played the {instrument} since age {age}.", "Which instrument does {n} play?"),
    ("{n} is learning {lang} for a trip to {city}.", "Why is {n} learning {lang}?"),
    ("{n} prefers {tool} for daily work on project {project}.", "Which tool does {n} prefer?"),
    ("{n}'s {r} birthday is on {day}, {month} {dom}.", "When is the birthday of {n}'s {r}?"),
    ("{n} runs the weekly {project} sync every {day} at {hour}.", "When is the {project} sync?"),
    ("{n} saved {amount} dollars for a flat in {city}.", "How much did {n} save for the flat?"),
    ("{n} dislikes {food} but orders it for the {r}.", "Which food does {n} dislike?"),
    ("{n} met the {r} at a {hobby} class in {city}.", "Where did {n} meet the {r}?"),
    ("{n} wants reports in {lang} with short bullet points.", "How does {n} want reports?"),
    ("The {project} deadline for {n} moved to {month} {dom}.", "When is {n}'s {project} deadline?"),
)
ZH_TEMPLATES = (
    ("{zn}的{zr}{year}年搬到了{zcity}。", "{zn}的{zr}搬到哪里了？"),
    ("{zn}在{zcity}当{zjob}，已经{age}年了。", "{zn}是做什么工作的？"),
    ("{zn}最喜欢吃{zfood}，每周都去吃。", "{zn}喜欢吃什么？"),
    ("{zn}每天早上喝{zdrink}，不喝别的。", "{zn}早上喝什么？"),
    ("{zn}的爱好是{zhobby}，周末常去{zcity}。", "{zn}有什么爱好？"),
    ("{zn}的{zr}养了{zpet}。", "{zn}的{zr}养了什么宠物？"),
    ("{zn}对{zfood}过敏，点菜要注意。", "{zn}对什么过敏？"),
    ("{zn}下个月{dom}号要去{zcity}出差。", "{zn}什么时候去{zcity}出差？"),
    ("{zn}的{zr}是{zjob}，住在{zcity}。", "{zn}的{zr}做什么工作？"),
    ("{zn}希望报告用中文写，要简短。", "{zn}希望报告怎么写？"),
)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


@dataclass(frozen=True, slots=True)
class Fact:
    user: str
    index: int
    text: str
    question: str


def user_id(index: int) -> str:
    return f"user{index:05d}"


def _slots(rnd: random.Random) -> dict[str, str]:
    pick = rnd.choice
    return {
        "n": pick(NAMES), "r": pick(RELATIVES), "city": pick(CITIES), "food": pick(FOODS), "hobby": pick(HOBBIES),
        "job": pick(JOBS), "pet": pick(PETS), "instrument": pick(INSTRUMENTS), "lang": pick(LANGS),
        "allergy": pick(ALLERGIES), "day": pick(DAYS), "tool": pick(TOOLS), "project": pick(PROJECTS),
        "month": pick(MONTHS), "dom": str(rnd.randint(1, 28)), "year": str(rnd.randint(1995, 2025)),
        "age": str(rnd.randint(4, 40)), "hour": f"{rnd.randint(7, 18)}:{rnd.choice(('00', '15', '30', '45'))}",
        "amount": f"{rnd.randint(2, 90) * 1000:,}",
        "zn": pick(ZH_NAMES), "zr": pick(ZH_RELATIVES), "zcity": pick(ZH_CITIES), "zfood": pick(ZH_FOODS),
        "zhobby": pick(ZH_HOBBIES), "zjob": pick(ZH_JOBS), "zpet": pick(ZH_PETS), "zdrink": pick(ZH_DRINKS),
    }


def user_facts(user: int, count: int, *, seed: int = 0, chinese_share: float = 0.4) -> list[Fact]:
    """``count`` facts of one user; the same arguments always give the same facts."""
    rnd = random.Random(f"engram-bench/{seed}/{user}")
    facts: list[Fact] = []
    seen: set[str] = set()
    while len(facts) < count:  # distinct texts: a duplicate would make "the" answer ambiguous
        templates = ZH_TEMPLATES if rnd.random() < chinese_share else EN_TEMPLATES
        fact, question = rnd.choice(templates)
        slots = _slots(rnd)
        text = fact.format(**slots)
        if text not in seen:
            seen.add(text)
            facts.append(Fact(user_id(user), len(facts), text, question.format(**slots)))
    return facts


@dataclass(frozen=True, slots=True)
class Query:
    user: str
    text: str
    target: str  # the fact the question was written from


def queries(users: int, per_user: int, count: int, *, seed: int = 0) -> list[Query]:
    """``count`` questions spread over the users, each asked about one stored fact."""
    rnd = random.Random(f"engram-bench-queries/{seed}/{users}/{count}")
    facts: dict[int, list[Fact]] = {}
    out = []
    for _ in range(count):
        user = rnd.randrange(users)
        if user not in facts:
            facts[user] = user_facts(user, per_user, seed=seed)
        fact = facts[user][rnd.randrange(per_user)]
        out.append(Query(fact.user, fact.question, fact.text))
    return out


def batches(user: int, per_user: int, batch: int, *, seed: int = 0) -> Iterator[list[str]]:
    texts = [fact.text for fact in user_facts(user, per_user, seed=seed)]
    for start in range(0, len(texts), batch):
        yield texts[start : start + batch]


# -- the many-users workload (issue 16): English memories of about 94 characters --------------

SHORT_FACTS = "short-facts"
MANY_USERS = "many-users"
WORKLOADS = (SHORT_FACTS, MANY_USERS)


def long_facts(user: int, count: int, *, seed: int = 0) -> list[Fact]:
    """``count`` English facts of one user, each two templated facts about the same
    person in one memory (about 94 characters, like the notes an assistant keeps);
    the question asks about the first half."""
    rnd = random.Random(f"engram-bench-long/{seed}/{user}")
    facts: list[Fact] = []
    seen: set[str] = set()
    while len(facts) < count:
        slots = _slots(rnd)
        (first, question), (second, _) = rnd.sample(EN_TEMPLATES, 2)
        text = f"{first.format(**slots)} {second.format(**slots)}"
        if text not in seen:
            seen.add(text)
            facts.append(Fact(user_id(user), len(facts), text, question.format(**slots)))
    return facts


def workload_facts(workload: str, user: int, count: int, *, seed: int = 0) -> list[Fact]:
    if workload == MANY_USERS:
        return long_facts(user, count, seed=seed)
    return user_facts(user, count, seed=seed)


def workload_queries(workload: str, users: int, per_user: int, count: int, *, seed: int = 0) -> list[Query]:
    """Questions spread over the users (each about one stored fact), in a seeded order."""
    rnd = random.Random(f"engram-bench-queries/{workload}/{seed}/{users}/{count}")
    facts: dict[int, list[Fact]] = {}
    out = []
    for _ in range(count):
        user = rnd.randrange(users)
        if user not in facts:
            facts[user] = workload_facts(workload, user, per_user, seed=seed)
        fact = facts[user][rnd.randrange(per_user)]
        out.append(Query(fact.user, fact.question, fact.text))
    return out


def workload_batches(workload: str, user: int, per_user: int, batch: int, *, seed: int = 0) -> Iterator[list[str]]:
    texts = [fact.text for fact in workload_facts(workload, user, per_user, seed=seed)]
    for start in range(0, len(texts), batch):
        yield texts[start : start + batch]
